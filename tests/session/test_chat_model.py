"""Each chat's model: `/model NAME` switches this chat only, is kept with the chat across a restart, never
touches config.yaml, and a chat without a pick follows the default model."""

from __future__ import annotations

import yaml

from desktop.core import Core
from desktop.session.chat_model import chat_model, choose_model
from desktop.session.session import SessionStore
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


async def test_a_chat_model_answers_in_that_chat_only_and_survives_a_restart(core: Core, fake: FakeOpenAI) -> None:
    picked, other = Conversation(core, chat_id="picked"), Conversation(core, chat_id="other")
    reply = await picked.ask("/model openai/qwen3:8b")
    assert "This chat now uses openai/qwen3:8b" in reply.content
    await picked.ask("hello")
    assert fake.requests[-1]["model"] == "qwen3:8b"
    await other.ask("hello")
    assert fake.requests[-1]["model"] == "test"
    assert "(the default, set in Settings)" in (await other.ask("/model")).content
    assert yaml.safe_load(core.settings.path.read_text(encoding="utf-8"))["model"] == "openai/test"

    reread = await SessionStore(core.sessions.directory).load(picked.key)  # what the next start reads
    assert chat_model(reread, "openai/test") == "openai/qwen3:8b"
    assert (await picked.ask("/model")).content == "Model for this chat: openai/qwen3:8b"


async def test_a_pick_in_a_chat_not_yet_saved_creates_no_file_and_comes_with_its_first_message(core: Core) -> None:
    session = await core.sessions.load("desktop:fresh")
    await choose_model(core.sessions, session, "openai/other")
    assert not core.sessions.path_for("desktop:fresh").exists()  # no empty chat appears in the list
    await core.sessions.append(session, {"role": "user", "content": "hi"})
    reread = await SessionStore(core.sessions.directory).load("desktop:fresh")
    assert chat_model(reread, "openai/test") == "openai/other"


async def test_model_typed_in_a_chat_not_yet_saved_leaves_no_empty_chat(core: Core) -> None:
    fresh = Conversation(core, chat_id="fresh-model")
    assert "This chat now uses openai/other" in (await fresh.ask("/model openai/other")).content
    assert not core.sessions.path_for(fresh.key).exists()  # no chat of only a notice appears in the list
    await fresh.ask("hi")
    reread = await SessionStore(core.sessions.directory).load(fresh.key)
    assert chat_model(reread, "openai/test") == "openai/other"
    assert [m.get("kind", "user") for m in reread.messages if m["role"] == "user"] == ["user"]


async def test_a_name_naming_no_provider_is_refused_in_words_and_the_chat_keeps_its_model(core: Core,
                                                                                      fake: FakeOpenAI) -> None:
    """It used to be taken silently, and the next turn failed in litellm's words about Huggingface endpoints."""
    await core.settings.update(lambda config: setattr(config, "api_base", None))
    chat = Conversation(core, chat_id="typo")
    for name in ("nosuch/x", "gpt-x"):
        assert (await chat.ask(f"/model {name}")).content == (
            f"The model name '{name}' names no provider the app knows; give provider/model, such as "
            "openai/gpt-4o-mini or ollama/llama3. This chat still uses openai/test.")
    assert (await chat.ask("/model")).content == "Model for this chat: openai/test (the default, set in Settings)"
    assert "This chat now uses anthropic/claude-x" in (await chat.ask("/model anthropic/claude-x")).content
    assert fake.requests == []


async def test_with_a_server_address_any_name_is_taken(core: Core, fake: FakeOpenAI) -> None:
    """A server of one's own names its models as it likes; the call says if the name does not fit."""
    chat = Conversation(core, chat_id="server")
    assert "This chat now uses my-own-model" in (await chat.ask("/model my-own-model")).content

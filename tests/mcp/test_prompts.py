"""MCP prompts as slash commands, through real turns: our MCPServer (over stdio and streamable HTTP) gives the
prompts, the scripted model receives them as the person's turn, and bad arguments are answered without it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from desktop.mcp import McpServers
from desktop.mcp.settings import McpConfig
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import RemoteServer
from tests.mcp.test_tools import started, until
from tests.memkeyring import MemoryKeyring

REVIEW_USAGE = "Use: /test:review topic=… audience=… [tone=…]"


@pytest.fixture
async def core(home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring,
               served: Callable[..., tuple[dict[str, Any], RemoteServer | None]]) -> AsyncIterator[Core]:
    core = await started(home_dir, model_config, {"test": served()[0]})
    await until(lambda: "/test:review" in commands(core))
    yield core
    await core.close()


def commands(core: Core) -> dict[str, str]:
    """The slash commands as the chat's completion and /help list them: name to summary."""
    return {c.name: c.summary for c in core.commands.all()}


def sent_text(fake: FakeOpenAI) -> str:
    """The person's turn as the model last received it, after the runtime context the app puts first."""
    last = fake.requests[-1]["messages"][-1]
    assert last["role"] == "user"
    return str(last["content"]).split("\n\n", 1)[1]


async def command(core: Core, typed: str) -> str:
    end = await Conversation(core).ask(typed)
    assert isinstance(end, TurnFinished)
    return end.content


async def test_prompts_are_commands_with_their_descriptions_and_arguments(core: Core) -> None:
    listed = commands(core)
    assert listed["/test:greet"] == "Greet someone. — arguments: name"
    assert listed["/test:review"] == "Review a topic for an audience. — arguments: topic, audience, [tone]"
    assert "- `/test:review` — Review a topic for an audience. — arguments: topic, audience, [tone]" in \
        await command(core, "/help")


async def test_a_prompt_goes_to_the_model_as_the_persons_turn(core: Core, fake: FakeOpenAI) -> None:
    fake.add({"content": "Here is the review."})
    typed = "/test:review 'the new API' audience=testers"
    assert await command(core, typed) == "Here is the review."
    assert sent_text(fake) == "User: Review the new API for testers, in a kind tone.\n\nAssistant: I will keep it short."
    saved = [m for m in session_lines(core, Conversation(core).key) if m.get("role") == "user"]
    assert saved[-1]["typed"] == typed  # the chat shows what the person wrote
    fake.add({"content": "Hello Ana!"})
    assert await command(core, '/TEST:greet "Ana Lima"') == "Hello Ana!"  # names match whatever the case
    assert sent_text(fake) == "Say hello to Ana Lima."


@pytest.mark.parametrize(("typed", "reply"), [
    ("/test:review API", f"The prompt review needs audience. {REVIEW_USAGE}"),
    ("/test:review tone=harsh", f"The prompt review needs topic, audience. {REVIEW_USAGE}"),
    ("/test:review a b c d", f"Too many arguments for review: 'd' left over. {REVIEW_USAGE}"),
    ("/test:review 'a b", f"Could not read the arguments (No closing quotation). {REVIEW_USAGE}"),
])
async def test_arguments_that_do_not_fit_are_explained_and_nothing_is_sent(
        core: Core, fake: FakeOpenAI, typed: str, reply: str) -> None:
    assert await command(core, typed) == reply
    assert fake.requests == []


@pytest.mark.parametrize("served", ["stdio"], indirect=True)
async def test_a_stopped_servers_prompts_are_no_longer_commands(core: Core, fake: FakeOpenAI) -> None:
    await core.settings.update(lambda config: setattr(config.section(McpConfig).servers["test"], "enabled", False))
    await until(lambda: core.get(McpServers).states() == {"test": "disabled"})
    assert not any(name.startswith("/test:") for name in commands(core))
    fake.add({"content": "no such command here"})
    assert await command(core, "/test:greet Ana") == "no such command here"  # plain text for the model now
    await core.settings.update(lambda config: setattr(config.section(McpConfig).servers["test"], "enabled", True))
    await until(lambda: "/test:greet" in commands(core))


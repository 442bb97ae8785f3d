"""What an undo leaves in its chat, through real turns against the scripted model: a line saved as the app's
message, and, when the undo comes while another turn of that chat runs, saved after that turn, never between
a tool call and its result."""

from __future__ import annotations

import asyncio

from desktop.checkpoints import Checkpoints
from desktop.conversation.transcript import Kind, rows_from_messages
from desktop.core import Core
from desktop.kernel.bus import ToolStarted, TurnFinished
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI


async def test_an_undo_during_a_turn_of_its_chat_is_noted_once_that_turn_ends(core: Core, chat: Conversation,
                                                                            fake: FakeOpenAI) -> None:
    checkpoints = core.get(Checkpoints)
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "plan.md", "content": "draft\n"}}]},
             {"content": "Written."})
    await chat.ask("write a plan")
    await asyncio.wait_for(checkpoints.settled(), 60)
    [written] = checkpoints.turns_of(chat.key)

    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 1; echo slept"}}]},
             {"content": "Slept."})
    await chat.send("take a nap")
    async with asyncio.timeout(60):
        while not any(started.name == "exec" for started in chat.of(ToolStarted)):  # the nap's, not the plan's
            await asyncio.sleep(0.01)
    result = await checkpoints.undo(chat.key, written.id)  # from the strip, while the nap's command runs
    assert result.undone and not (core.workspace / "plan.md").exists()
    end = await chat.wait_end(2)
    assert isinstance(end, TurnFinished) and end.content == "Slept."
    async with asyncio.timeout(10):
        while session_lines(core, chat.key)[-1].get("kind") != "notice":
            await asyncio.sleep(0.01)

    messages = session_lines(core, chat.key)[1:]
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant", "user"]
    assert messages[-1]["content"].startswith("[Undid the changes of “write a plan”: 1 file removed]")
    rows = rows_from_messages(messages)
    assert (rows[-1].kind, rows[-1].text) == (Kind.NOTICE, "Undid the changes of “write a plan”: 1 file removed")


async def test_an_undo_as_the_next_message_is_being_sent_waits_for_that_turn_too(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    """From the moment a turn says it started (its message saved next, the hooks after), the chat is busy for
    an undo: its line goes after the answer, never between the question and it."""
    checkpoints = core.get(Checkpoints)
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "plan.md", "content": "draft\n"}}]},
             {"content": "Written."})
    await chat.ask("write a plan")
    async with asyncio.timeout(60):
        await checkpoints.settled()
    [written] = checkpoints.turns_of(chat.key)

    started, go_on = asyncio.Event(), asyncio.Event()

    async def held(_session: object) -> None:  # the turn, held before its first hook: the question just saved
        started.set()
        async with asyncio.timeout(30):
            await go_on.wait()

    core.loop.hooks.before_turn.insert(0, held)
    fake.add({"content": "Fine."})
    await chat.send("how are you?")
    async with asyncio.timeout(30):
        await started.wait()
    assert (await checkpoints.undo(chat.key, written.id)).undone
    go_on.set()
    end = await chat.wait_end(2)
    assert isinstance(end, TurnFinished) and end.content == "Fine."
    async with asyncio.timeout(10):
        while session_lines(core, chat.key)[-1].get("kind") != "notice":
            await asyncio.sleep(0.01)
    roles = [m["role"] for m in session_lines(core, chat.key)[1:]]
    assert roles[-3:] == ["user", "assistant", "user"]  # the question, its answer, then the undo's line

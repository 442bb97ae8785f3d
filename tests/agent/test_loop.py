"""The agent loop (desktop/agent/loop.py) end to end: bus → loop → runner → litellm over HTTP → tools → session
file. Asking from code waits for the turn answering it; turns are serial per chat and concurrent across
chats; messages sent mid-turn join it; commands and stops are answered by the loop itself."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from desktop.agent.loop import FAILED_PLACEHOLDER
from desktop.core import Core, build_core
from desktop.kernel.bus import (
    MessageKind,
    OutboundKind,
    OutboundMessage,
    TextDelta,
    ToolStarted,
    TurnError,
    TurnFinished,
)
from tests.conftest import Conversation, session_lines, tool_results
from tests.fakeserver import FakeOpenAI


async def test_echo_turn_is_answered_and_saved(chat: Conversation, core: Core) -> None:
    end = await chat.ask("hello there")
    assert isinstance(end, TurnFinished)
    assert end.content == "echo: hello there"
    lines = session_lines(core, chat.key)
    assert lines[0]["_type"] == "metadata" and lines[0]["key"] == chat.key
    assert [(m["role"], m["content"]) for m in lines[1:]] == [("user", "hello there"),
                                                             ("assistant", "echo: hello there")]
    assert "".join(e.text for e in chat.of(TextDelta)) == "echo: hello there"

async def test_ask_returns_the_answer_carried_once(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "Four."})
    end = await chat.core.loop.ask(chat.key, "2+2?")
    assert isinstance(end, TurnFinished) and end.content == "Four."
    assert [e for e in chat.events if isinstance(e, OutboundMessage)] == []  # the answer is not sent twice
    assert [e.content for e in chat.of(TurnFinished)] == ["Four."]

async def test_a_message_joining_a_running_turn_is_answered_by_that_turn(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "delay": 0.4},
             {"content": "Listed, and noted your follow-up."})
    first = asyncio.ensure_future(chat.core.loop.ask(chat.key, "list the workspace"))
    await asyncio.sleep(0.2)
    second = await asyncio.wait_for(chat.core.loop.ask(chat.key, "also, hurry"), 30)
    assert second == await first and second.content == "Listed, and noted your follow-up."
    assert any(m.get("content") == "also, hurry" for m in fake.requests[-1]["messages"])

async def test_asking_for_another_chat_does_not_wait_for_this_one(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "slow", "delay": 1.0}, {"content": "quick"})
    slow = asyncio.ensure_future(chat.core.loop.ask("cli:slow", "take your time"))
    await asyncio.sleep(0.1)
    quick = await asyncio.wait_for(chat.core.loop.ask("cli:quick", "and you?"), 30)
    assert quick.content == "quick" and not slow.done()
    assert (await slow).content == "slow"

async def test_a_command_is_answered_through_ask_too(chat: Conversation) -> None:
    end = await chat.core.loop.ask(chat.key, "/stop")
    assert isinstance(end, TurnFinished) and end.content == "Nothing is running."

async def test_stop_ends_the_running_turn_keeping_its_start_and_says_when_nothing_runs(
        chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "The first part of a long answer", "chunk": 6, "hang": 10})
    story = asyncio.ensure_future(chat.core.loop.ask(chat.key, "tell me a story"))
    await chat.first(TextDelta)
    stopped = await asyncio.wait_for(chat.core.loop.stop(chat.key), 30)
    assert isinstance(stopped, TurnFinished) and stopped.stopped and stopped.content == "Stopped."
    told = await asyncio.wait_for(story, 30)
    assert isinstance(told, TurnFinished) and told.stopped and told.content.startswith("The fi")
    idle = await asyncio.wait_for(chat.core.loop.stop(chat.key), 30)
    assert isinstance(idle, TurnFinished) and idle.content == "Nothing is running." and not idle.stopped

async def test_stop_keeps_partial_answer(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"content": "The first part of a long answer", "chunk": 6, "hang": 10})
    await chat.send("tell me a story")
    await chat.first(TextDelta)
    await chat.send("/stop")
    end = await chat.wait_end()
    assert isinstance(end, TurnFinished) and end.stopped
    last = session_lines(core, chat.key)[-1]
    assert last["role"] == "assistant" and last["stopped"] is True
    assert last["content"].startswith("The fi")

async def test_message_sent_during_a_turn_is_injected(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 1"}}]}, {"content": "done both"})
    await chat.send("first")
    await chat.first(ToolStarted)
    await chat.send("also this")
    end = await chat.wait_end()
    assert isinstance(end, TurnFinished) and end.content == "done both"
    second = fake.requests[1]["messages"]
    assert second[-1] == {"role": "user", "content": "also this"}
    await asyncio.sleep(0.2)
    assert len(chat.of(TurnFinished)) == 1  # consumed by the running turn, not queued again

async def test_message_left_over_becomes_its_own_turn(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "slow answer", "delay": 0.5})
    await chat.send("first")
    await asyncio.sleep(0.2)
    await chat.send("second")
    first = await chat.wait_end(1)
    second = await chat.wait_end(2)
    assert first.content == "slow answer"
    assert second.content == "echo: second"

async def test_sessions_run_concurrently(core: Core, fake: FakeOpenAI) -> None:
    """Two chats' turns are in flight at once: the model server answers neither until both have asked."""
    fake.add({"content": "a", "together": 2}, {"content": "b", "together": 2})
    a, b = Conversation(core, chat_id="a"), Conversation(core, chat_id="b")
    await a.send("x")
    await b.send("y")
    ends = [await a.wait_end(), await b.wait_end()]
    assert sorted(end.content for end in ends if isinstance(end, TurnFinished)) == ["a", "b"]


async def test_slash_commands(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    await chat.ask("remember me")
    help_text = (await chat.ask("/help")).content
    items = [line for line in help_text.splitlines() if line.startswith("- `/")]  # a Markdown list, one per command
    assert {item.split("`")[1] for item in items} >= {"/new", "/stop", "/status", "/help", "/model"}
    assert all(" — " in item for item in items)
    status = (await chat.ask("/status")).content
    items = [line for line in status.splitlines() if line.startswith("- **")]
    assert [item.split("**")[1] for item in items] == ["Model:", "Context:", "Running:"]
    assert "openai/test" in items[0] and "tokens" in items[1]
    assert (await chat.ask("/new")).content.startswith("Started a new conversation")
    assert not core.sessions.path_for(chat.key).exists()
    await chat.ask("fresh")
    turns = [r for r in fake.requests if r.get("tools")]  # /new's background archive summary has no tools
    assert "remember me" not in json.dumps(turns[-1]["messages"])
    assert len(turns) == 2  # commands never reach the model as turns

async def test_status_during_a_turn_does_not_end_it(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "slow", "delay": 0.8})
    await chat.send("work")
    await asyncio.sleep(0.2)
    await chat.send("/status")
    end = await chat.wait_end()
    assert end.content == "slow"
    assert any(isinstance(e, OutboundMessage) and e.kind is OutboundKind.COMMAND for e in chat.events)

async def test_history_reaches_the_next_turn(chat: Conversation, fake: FakeOpenAI) -> None:
    await chat.ask("my name is Ada")
    await chat.ask("what is my name?")
    contents = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "my name is Ada" in contents and "echo: my name is Ada" in contents
    assert fake.requests[-1]["messages"][0]["role"] == "system"
    assert "Current time:" in contents[-1] and "Current time:" not in contents[0]

async def test_long_tool_results_are_previewed_in_history(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    big = "".join(f"line {i:05d}\n" for i in range(3000))
    (core.workspace / "big.txt").write_text(big)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "cat big.txt"}}]}, {"content": "read it"})
    await chat.ask("read big")
    in_turn = tool_results(fake.requests[1])[0]
    assert "line 00000" in in_turn and "line 02999" in in_turn and len(in_turn) <= 16_100
    saved = session_lines(core, chat.key)[3]
    assert saved["role"] == "tool" and len(saved["content"]) < 800
    assert "line 00000" in Path(saved["full_output"]).read_text()
    assert "line 02999" in Path(saved["full_output"]).read_text()
    await chat.ask("and now?")
    later = tool_results(fake.requests[-1])[0]
    assert "full output saved at" in later

async def test_a_scheduled_message_is_kept_with_its_kind_and_names_the_chat_it_begins_for_good(
        core: Core, fake: FakeOpenAI) -> None:
    """Named by the name it came with, else by its first line as the chat shows it; the person's first words
    after it leave the name (they rename a chat themselves)."""
    fake.add({"content": "Time to stretch!"}, {"content": "ok"}, {"content": "Done."})
    await core.loop.ask("desktop:r", "[Reminder “Stretch” came due]\nStand up", kind=MessageKind.SCHEDULED)
    await core.loop.ask("desktop:r", "thanks, what next?")
    session = await core.sessions.load("desktop:r")
    assert session.messages[0]["kind"] == "scheduled" and "kind" not in session.messages[2]
    assert session.title == "Reminder “Stretch” came due"
    await core.loop.ask("desktop:b", "[Background task “Count” finished]\nReport: 3", kind=MessageKind.SUBAGENT_RESULT,
                        title="Background task: Count")
    assert session_lines(core, "desktop:b")[0]["title"] == "Background task: Count"  # with its first line

async def test_provider_down_keeps_the_question_and_the_reason_but_never_sends_the_reason(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add(*[{"status": 500}] * 4)
    end = await chat.ask("are you there?")
    assert isinstance(end, TurnError)
    assert "500" in end.message
    messages = session_lines(core, chat.key)[1:]
    assert messages[0]["role"] == "user" and messages[0]["content"] == "are you there?"
    assert messages[1]["content"] == FAILED_PLACEHOLDER
    assert messages[1]["error"] == end.message and messages[1]["error_kind"] == "other"  # shown after a restart
    end = await chat.ask("again")
    assert isinstance(end, TurnFinished)
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "are you there?" in sent and "scripted failure" not in sent

async def test_provider_unreachable_gives_a_clear_error(chat: Conversation, core: Core) -> None:
    core.config.api_base = "http://127.0.0.1:9/v1"
    end = await chat.ask("hello?")
    assert isinstance(end, TurnError)
    assert end.message == "Can't reach the model server at http://127.0.0.1:9 — is it running?"

async def test_api_key_is_sent_but_never_written(core: Core, fake: FakeOpenAI, memory_keyring, home_dir: Path) -> None:
    memory_keyring.store[("nanobot-tray", "openai")] = "sk-test-SECRET-4242"
    fake.require_key = "sk-test-SECRET-4242"  # refused without it: only then is the keyring asked
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "env; echo done"}}]}, {"content": "ok"})
    chat = Conversation(core)
    await chat.ask("show env")
    assert fake.headers[0]["authorization"] == "Bearer no-key-needed"
    assert fake.headers[1]["authorization"] == "Bearer sk-test-SECRET-4242"
    assert memory_keyring.calls == ["get openai"]
    assert "SECRET-4242" not in json.dumps(fake.requests)
    for path in home_dir.rglob("*"):
        if path.is_file():
            assert b"SECRET-4242" not in path.read_bytes(), path


async def test_a_turn_stopped_or_failing_while_its_attachments_are_read_still_ends(
        chat: Conversation, core: Core, fake: FakeOpenAI, tmp_path: Path, monkeypatch) -> None:
    """Reading attachments comes after the turn has said it started: a Stop then, or a file that breaks the
    reading, must still end the turn for everyone waiting on it (the window's busy dot, an undo's note), and
    a stopped turn must not hand back the previous answer as its own."""
    from desktop.agent import attachments

    fake.add({"content": "An earlier answer."})
    await chat.ask("hello")
    reading, release = threading.Event(), threading.Event()
    real_prepare = attachments.prepare

    def slow_prepare(*args: object) -> attachments.Prepared:
        reading.set()
        release.wait(30)
        return real_prepare(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(attachments, "prepare", slow_prepare)
    notes = tmp_path / "notes.txt"
    notes.write_text("plans")
    asked = asyncio.ensure_future(core.loop.ask(chat.key, "read this", media=[str(notes)]))
    async with asyncio.timeout(30):
        while not reading.is_set():
            await asyncio.sleep(0.01)
    stopped = await core.loop.stop(chat.key)
    release.set()
    async with asyncio.timeout(30):
        told = await asyncio.shield(asked)
    assert stopped.stopped and isinstance(told, TurnFinished) and told.stopped and told.content == ""
    ended = chat.of(TurnFinished)[-1]  # what the window hears: the turn is over, with nothing of its own
    assert ended.stopped and ended.content == ""

    def broken_prepare(*args: object) -> attachments.Prepared:
        raise RuntimeError("the reader broke")

    monkeypatch.setattr(attachments, "prepare", broken_prepare)
    async with asyncio.timeout(30):
        failed = await core.loop.ask(chat.key, "and this", media=[str(notes)])
    assert isinstance(failed, TurnError) and "the reader broke" in failed.message
    assert isinstance(chat.events[-1], TurnError)
    fake.add({"content": "Still here."})
    async with asyncio.timeout(30):
        assert (await core.loop.ask(chat.key, "still there?")).content == "Still here."


async def test_a_chat_whose_file_cannot_be_read_says_so_and_the_next_message_is_answered(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """A folder where the chat's file should be (a backup restored wrong) fails the turn before it starts: the
    person is told why, instead of waiting for ever, and the chat's queue goes on once the file is back."""
    path = core.sessions.path_for(chat.key)
    path.mkdir(parents=True)
    end = await chat.ask("hello")
    assert isinstance(end, TurnError) and "could not be taken up" in end.message and "Is a directory" in end.message
    path.rmdir()
    fake.add({"content": "Back again."})
    assert (await chat.ask("hello again")) == TurnFinished(chat.key, "Back again.")


async def test_a_message_sent_during_a_turn_the_quit_cut_short_is_kept_in_its_chat(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """A question sent while a turn ran waits for it; quitting cut that turn short, and after a restart the question
    was gone from the chat though the person had sent it. Now it is kept there, unanswered, as a question whose
    turn was stopped before any answer is."""
    held = threading.Event()
    try:
        fake.default = lambda _body: {"content": "A long answer.", "after": held}
        await chat.send("first")
        for _ in range(500):
            if fake.requests:
                break
            await asyncio.sleep(0.02)
        await chat.send("and this, while you are at it")
        await asyncio.sleep(0.2)
        await core.close()
    finally:
        held.set()
    asked = [m["content"] for m in session_lines(build_core(), chat.key)[1:] if m["role"] == "user"]
    assert asked == ["first", "and this, while you are at it"]


async def test_a_message_whose_turn_the_quit_cut_off_before_it_began_is_kept_in_its_chat(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """The running turn ended while the app quit, and the message that waited behind it was taken up by a new turn
    that quitting cancelled before it had saved anything: the message was gone from the chat. Now no turn starts
    once quitting has begun, and the message is kept."""
    fake.add({"content": "The first answer.", "delay": 1})
    await chat.send("first")
    for _ in range(500):
        if fake.requests:
            break
        await asyncio.sleep(0.02)
    await chat.send("then this")
    await asyncio.sleep(0.2)
    await core.close()
    lines = session_lines(build_core(), chat.key)[1:]
    assert [(m["role"], m["content"]) for m in lines] == [("user", "first"), ("assistant", "The first answer."),
                                                          ("user", "then this")]


async def test_a_failed_answer_the_chat_file_refuses_still_ends_the_turn_with_the_models_reason(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """The model fails and then the chat's file refuses the failed answer's note (a full disk; here a folder where
    the file goes): the person used to read only "could not be taken up", and a message sent into the turn never
    heard its end. Now both hear the model's reason and that the chat could not be saved."""
    go = threading.Event()
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo hi"}}]},
             {"status": 500, "after": go}, *[{"status": 500}] * 3)
    first = asyncio.ensure_future(core.loop.ask(chat.key, "first"))
    await chat.first(ToolStarted)
    joined = asyncio.ensure_future(core.loop.ask(chat.key, "also this"))
    async with asyncio.timeout(30):
        while len(fake.requests) < 2:  # the second call is held: the message sent into the turn is taken
            await asyncio.sleep(0.01)
    path = core.sessions.path_for(chat.key)
    path.unlink()
    path.mkdir()
    go.set()
    async with asyncio.timeout(30):
        ends = await asyncio.gather(first, joined)
    for end in ends:
        assert isinstance(end, TurnError) and "500" in end.message and "could not be saved" in end.message
    assert fake.requests[1]["messages"][-1]["content"] == "also this"

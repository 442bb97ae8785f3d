"""The turn pipeline end to end: bus → loop → runner → litellm over HTTP → tools → session file."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from desktop.agent.loop import FAILED_PLACEHOLDER
from desktop.core import Core
from desktop.kernel.bus import (
    OutboundKind,
    OutboundMessage,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
)
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


def session_lines(core: Core, key: str) -> list[dict]:
    path = core.sessions.path_for(key)
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_results(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_echo_turn_is_answered_and_saved(chat: Conversation, core: Core) -> None:
    end = await chat.ask("hello there")
    assert isinstance(end, TurnFinished)
    assert end.content == "echo: hello there"
    lines = session_lines(core, chat.key)
    assert lines[0]["_type"] == "metadata" and lines[0]["key"] == chat.key
    assert [(m["role"], m["content"]) for m in lines[1:]] == [("user", "hello there"),
                                                             ("assistant", "echo: hello there")]
    assert "".join(e.text for e in chat.of(TextDelta)) == "echo: hello there"


async def test_multi_step_tools_with_fragmented_arguments(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "notes/a.txt", "content": "alpha beta"}}],
              "chunk": 3},
             {"tool_calls": [{"name": "list_dir", "arguments": {"path": "notes"}}], "chunk": 2},
             {"content": "Wrote and listed."})
    end = await chat.ask("make a note")
    assert isinstance(end, TurnFinished) and end.content == "Wrote and listed."
    assert (core.workspace / "notes" / "a.txt").read_text() == "alpha beta"
    assert "a.txt" in tool_results(fake.requests[2])[-1]
    roles = [m["role"] for m in session_lines(core, chat.key)[1:]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert [e.name for e in chat.of(ToolStarted)] == ["write_file", "list_dir"]
    assert all(e.ok for e in chat.of(ToolFinished))


async def test_bad_tool_calls_become_tool_errors_with_a_hint(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "no_such_tool", "arguments": {}},
                             {"name": "read_file", "arguments": '{"path": "x.txt"'},
                             {"name": "read_file", "arguments": {"path": "x.txt", "bogus": 1}},
                             {"name": "exec", "arguments": {}}]},
             {"content": "recovered"})
    end = await chat.ask("go")
    assert isinstance(end, TurnFinished) and end.content == "recovered"
    unknown, malformed, extra, missing = tool_results(fake.requests[1])
    assert "unknown tool 'no_such_tool'" in unknown and "read_file" in unknown
    assert "not valid JSON" in malformed
    assert "unexpected bogus" in extra
    assert "missing required command" in missing
    assert all("try a different approach" in r for r in (unknown, malformed, extra, missing))
    assert [e.ok for e in chat.of(ToolFinished)] == [False] * 4


async def test_max_iterations_ends_with_a_summary_call_without_tools(chat: Conversation, core: Core,
                                                                    fake: FakeOpenAI) -> None:
    core.loop.config.max_iterations = 3
    fake.default = lambda body: ({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}
                                 if body.get("tools") else {"content": "Listed three times; nothing remains."})
    end = await chat.ask("loop forever")
    assert isinstance(end, TurnFinished)
    assert end.content == "Listed three times; nothing remains."
    assert len(fake.requests) == 4
    assert "tools" not in fake.requests[-1]


async def test_provider_error_then_recovery_is_retried(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"status": 500}, {"status": 503}, {"content": "fine now"})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "fine now"
    assert len(fake.requests) == 3


async def test_quota_errors_are_not_retried(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"status": 429, "body": {"error": {"message": "You exceeded your current quota",
                                                "type": "insufficient_quota"}}})
    end = await chat.ask("hi")
    assert isinstance(end, TurnError)
    assert len(fake.requests) == 1


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


async def test_stop_closes_an_unfinished_tool_call(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 30"}}]})
    await chat.send("wait a while")
    await chat.first(ToolStarted)
    await chat.send("/stop")
    end = await chat.wait_end()
    assert isinstance(end, TurnFinished) and end.stopped
    messages = session_lines(core, chat.key)[1:]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[2]["tool_call_id"] == messages[1]["tool_calls"][0]["id"]
    assert "Interrupted" in messages[2]["content"]
    end = await chat.ask("next")  # the transcript is still valid for the provider
    assert isinstance(end, TurnFinished)


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
    fake.add({"content": "a", "delay": 0.6}, {"content": "b", "delay": 0.6})
    a, b = Conversation(core, chat_id="a"), Conversation(core, chat_id="b")
    started = asyncio.get_running_loop().time()
    await a.send("x")
    await b.send("y")
    await a.wait_end()
    await b.wait_end()
    assert asyncio.get_running_loop().time() - started < 1.1


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


async def test_reasoning_is_separate_from_the_answer(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"reasoning": "thinking hard", "content": "answer one"},
             {"content": "<think>hidden plan</think>answer two", "chunk": 3})
    first = await chat.ask("q1")
    second = await chat.ask("q2")
    assert first.content == "answer one" and second.content == "answer two"
    assert "".join(e.text for e in chat.of(ReasoningDelta)) == "thinking hardhidden plan"
    saved = [m for m in session_lines(core, chat.key)[1:] if m["role"] == "assistant"]
    assert saved[0]["reasoning_content"] == "thinking hard"
    assert saved[1]["content"] == "answer two"


async def test_history_reaches_the_next_turn(chat: Conversation, fake: FakeOpenAI) -> None:
    await chat.ask("my name is Ada")
    await chat.ask("what is my name?")
    contents = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "my name is Ada" in contents and "echo: my name is Ada" in contents
    assert fake.requests[-1]["messages"][0]["role"] == "system"
    assert "Current time:" in contents[-1] and "Current time:" not in contents[0]


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


async def test_corrupted_session_file_loads(core: Core, fake: FakeOpenAI) -> None:
    chat = Conversation(core, chat_id="torn")
    path = core.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"_type": "metadata", "key": chat.key}) + "\n"
                    + json.dumps({"role": "user", "content": "old question"}) + "\n"
                    + json.dumps({"role": "assistant", "content": "old answer"}) + "\n"
                    + '{"role": "user", "content": "half writ')
    end = await chat.ask("still there?")
    assert isinstance(end, TurnFinished)
    sent = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "old question" in sent and "old answer" in sent


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


async def test_status_during_a_turn_does_not_end_it(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "slow", "delay": 0.8})
    await chat.send("work")
    await asyncio.sleep(0.2)
    await chat.send("/status")
    end = await chat.wait_end()
    assert end.content == "slow"
    assert any(isinstance(e, OutboundMessage) and e.kind is OutboundKind.COMMAND for e in chat.events)


async def test_message_tool_reaches_the_user_marked(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "message", "arguments": {"content": "halfway there"}}]}, {"content": "done"})
    await chat.ask("go")
    sent = [e for e in chat.events if isinstance(e, OutboundMessage) and e.kind is OutboundKind.MESSAGE]
    assert [e.content for e in sent] == ["halfway there"]


async def test_a_tool_call_cut_off_by_a_crash_is_closed_on_load(core: Core, chat: Conversation,
                                                                 fake: FakeOpenAI) -> None:
    """A kill mid-tool leaves a call without a result; the next request must still be a valid history."""
    call = {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": "{\"command\": \"sleep 99\"}"}}
    lines = [{"_type": "metadata", "key": chat.key, "title": "Crashed"},
             {"role": "user", "content": "run it"},
             {"role": "assistant", "content": None, "tool_calls": [call]}]
    path = core.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    fake.add({"content": "sorry, that was cut off"})
    await chat.ask("what happened?")
    sent = fake.requests[-1]["messages"]
    at = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
    assert sent[at + 1]["role"] == "tool" and sent[at + 1]["tool_call_id"] == "call_1"
    assert "Interrupted" in sent[at + 1]["content"] and sent[at + 2]["role"] == "user"
    saved = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [m.get("role") for m in saved[1:]] == ["user", "assistant", "tool", "user", "assistant"]


async def test_a_prompt_file_that_may_not_be_read_is_named_not_sent(chat: Conversation, core: Core,
                                                                     fake: FakeOpenAI, tmp_path: Path) -> None:
    """USER.md as a link to a file outside the workspace, SOUL.md as a pipe, MEMORY.md too big: the model is
    told each was not read (so it can tell the user), gets none of their contents, and the turn does not hang."""
    secret = tmp_path / "private.txt"
    secret.write_text("PRIVATE-CONTENT")
    ws = core.workspace
    (ws / "USER.md").unlink()
    (ws / "USER.md").symlink_to(secret)
    (ws / "SOUL.md").unlink()
    os.mkfifo(ws / "SOUL.md")
    (ws / "memory" / "MEMORY.md").write_text("x" * (600 * 1024))
    (ws / "AGENTS.md").write_text("# Agents\n\nAlways answer in French.\n")
    fake.add({"content": "ok"})
    assert isinstance(await chat.ask("hello"), TurnFinished)
    system = fake.requests[-1]["messages"][0]["content"]
    assert "Always answer in French." in system  # a plain file is read as ever
    assert "## USER.md\n\n[Not read: USER.md is a link that leads outside" in system
    assert "## SOUL.md\n\n[Not read: SOUL.md is a named pipe" in system
    assert "# Memory\n\n[Not read: memory/MEMORY.md is 600 KB; the app reads files up to 512 KB" in system
    assert "PRIVATE-CONTENT" not in json.dumps(fake.requests) and "xxxxxxxx" not in system

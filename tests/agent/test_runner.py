"""One turn's steps (desktop/agent/runner.py): the model's tool calls run and feed back, bad calls become
errors the model reads, the step limit, retries, reasoning kept apart, and what a stop leaves recorded."""

from __future__ import annotations

from desktop.core import Core
from desktop.kernel.bus import (
    OutboundKind,
    OutboundMessage,
    ReasoningDelta,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
)
from tests.conftest import Conversation, session_lines, tool_results
from tests.fakeserver import FakeOpenAI


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

async def test_message_tool_reaches_the_user_marked(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "message", "arguments": {"content": "halfway there"}}]}, {"content": "done"})
    await chat.ask("go")
    sent = [e for e in chat.events if isinstance(e, OutboundMessage) and e.kind is OutboundKind.MESSAGE]
    assert [e.content for e in sent] == ["halfway there"]

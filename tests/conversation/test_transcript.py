"""A chat's rows built from a real turn's events (against the scripted model server) are the rows the same chat
shows after a reload, read from its saved session: tools with their results, reasoning, an answer stopped midway
and one cut off by a failed call."""

from __future__ import annotations

from typing import Any

from desktop.conversation.transcript import (
    CUT_OFF,
    INTERRUPTED,
    Kind,
    Transcript,
    rows_from_messages,
    rows_from_task_file,
)
from desktop.core import Core
from desktop.kernel.bus import TextDelta, ToolStarted
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI

Shown = tuple[Any, ...]


def shown(transcript_rows: list[Any]) -> list[Shown]:
    """What a person sees of each row (not how it was built: live rows have no saved message number)."""
    return [(r.kind, r.text, r.media, r.stopped, r.cut_off, r.fix_in_settings,
             None if r.tool is None else (r.tool.name, r.tool.arguments, r.tool.result, r.tool.ok, r.tool.title,
                                          _milliseconds(r.tool.seconds)))
            for r in transcript_rows]


def _milliseconds(seconds: float | None) -> int | None:
    """A tool's running time as the chat shows one under a second (desktop/ui/chat/render.py)."""
    return None if seconds is None else round(seconds * 1000)


def live(chat: Conversation, question: str) -> Transcript:
    """The rows as the chat window builds them while the turn runs: the question, then every event of the chat."""
    transcript = Transcript()
    transcript.add_user(question)
    for event in chat.events:
        if getattr(event, "session_key", None) == chat.key:
            transcript.apply(event)
    return transcript


def reloaded(core: Core, chat: Conversation) -> list[Shown]:
    return shown(rows_from_messages(session_lines(core, chat.key)[1:]))


async def test_a_tool_turn_live_is_the_same_chat_reloaded(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"reasoning": "The person wants a listing.", "content": "Let me look.",
              "tool_calls": [{"name": "exec", "arguments": {"command": "echo tool-output-here"}},
                             {"name": "no_such_tool", "arguments": {"x": 1}}]},
             {"content": "## Found\n\nOne line of **output**."})
    await chat.send("what is there?")
    await chat.wait_end()
    transcript = live(chat, "what is there?")

    assert [r.kind for r in transcript.rows] == [Kind.USER, Kind.REASONING, Kind.ASSISTANT, Kind.TOOL, Kind.TOOL,
                                                 Kind.ASSISTANT]
    ran, failed = transcript.rows[3].tool, transcript.rows[4].tool
    assert ran is not None and ran.ok and "tool-output-here" in (ran.result or "")
    assert failed is not None and failed.ok is False
    assert transcript.rows[-1].text == "## Found\n\nOne line of **output**." and not transcript.busy
    assert not any(r.streaming for r in transcript.rows) and not transcript.running
    assert shown(transcript.rows) == reloaded(core, chat)


async def test_a_stopped_tool_live_is_the_same_chat_reloaded(core: Core, chat: Conversation,
                                                            fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 31.5"}}]})
    await chat.send("wait a while")
    await chat.first(ToolStarted)
    await core.loop.stop(chat.key)
    await chat.wait_end()
    transcript = live(chat, "wait a while")

    assert [r.kind for r in transcript.rows] == [Kind.USER, Kind.TOOL, Kind.NOTICE] and transcript.stopped
    assert transcript.rows[1].tool is not None and transcript.rows[1].tool.result == INTERRUPTED
    assert shown(transcript.rows) == reloaded(core, chat)


async def test_an_answer_stopped_midway_live_is_the_same_chat_reloaded(core: Core, chat: Conversation,
                                                                      fake: FakeOpenAI) -> None:
    fake.add({"reasoning": "Short.", "content": "The first part, then a long pause.", "chunk": 15,
              "pace": 5})
    await chat.send("tell me")
    await chat.first(TextDelta)
    await core.loop.stop(chat.key)
    await chat.wait_end()
    transcript = live(chat, "tell me")

    answer = transcript.last_answer()
    assert answer is not None and answer.stopped and answer.text == "The first part,"
    assert shown(transcript.rows) == reloaded(core, chat)


async def test_a_cut_off_answer_live_is_the_same_chat_reloaded(core: Core, chat: Conversation,
                                                              fake: FakeOpenAI) -> None:
    fake.add({"reasoning": "Thinking about foxes.", "content": "Once upon a time there was a fox", "chunk": 5,
              "cut": 9})  # the role, five pieces of reasoning, three of the answer
    await chat.send("a story")
    await chat.wait_end()
    transcript = live(chat, "a story")

    assert [r.kind for r in transcript.rows] == [Kind.USER, Kind.ASSISTANT, Kind.ERROR]  # no half reasoning
    assert transcript.rows[1].cut_off and transcript.rows[1].text.startswith("Once upon a tim")
    assert CUT_OFF not in transcript.rows[1].text  # the mark is drawn under it, not part of the answer
    assert shown(transcript.rows) == reloaded(core, chat)


async def test_a_retry_that_fails_keeps_the_half_answer_it_was_to_replace(core: Core, chat: Conversation,
                                                                           fake: FakeOpenAI) -> None:
    """Retry while the server is still down used to leave only the failure, on screen and on disk."""
    fake.add({"content": "Once upon a time there was a fox", "chunk": 5, "cut": 4},
             {"status": 400, "body": {"error": {"message": "model is overloaded"}}})
    await chat.send("a story")
    await chat.wait_end()
    await chat.send("a story", redo=True)
    await chat.wait_end(count=2)
    rows = rows_from_messages(session_lines(core, chat.key)[1:])
    assert [r.kind for r in rows] == [Kind.USER, Kind.ASSISTANT, Kind.ERROR]
    assert rows[1].cut_off and rows[1].text.startswith("Once upon a")
    assert "overloaded" in rows[2].text


def test_a_background_tasks_file_reads_as_the_chat_shows_a_turn_and_survives_a_cut_line() -> None:
    raw = "\n".join([
        '{"_type": "task", "id": "ab12cd", "label": "Disk use", "task": "how full is the disk?", "origin": "cli:x"}',
        '{"role": "system", "content": "# Background task ..."}',
        '{"role": "user", "content": "[runtime]\\n\\nhow full is the disk?"}',
        '{"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", '
        '"function": {"name": "exec", "arguments": "{\\"command\\": \\"df -h\\"}"}}]}',
        '{"role": "tool", "tool_call_id": "c1", "name": "exec", "content": "/dev/sda1  40%", "ok": true}',
        '{"role": "assistant", "content": "## Report\\n\\nThe disk is 40% full."}',
        '{"_type": "end", "status": "done", "result": "## Report\\n\\nThe disk is 40% full."}',
        '{"role": "assistant", "content": "cut sho',  # a write the app did not finish
    ])
    rows = rows_from_task_file(raw)
    assert [(r.kind, r.text) for r in rows] == [
        (Kind.USER, "how full is the disk?"), (Kind.TOOL, ""), (Kind.ASSISTANT, "## Report\n\nThe disk is 40% full."),
        (Kind.NOTICE, "Done.")]
    tool = rows[1].tool
    assert tool is not None and (tool.name, tool.arguments, tool.result, tool.ok) == (
        "exec", {"command": "df -h"}, "/dev/sda1  40%", True)


def test_a_background_task_that_failed_or_never_ended_says_so() -> None:
    task = '{"_type": "task", "label": "X", "task": "look"}'
    failed = rows_from_task_file(f'{task}\n{{"_type": "end", "status": "failed", "result": "the model could not be reached"}}')
    assert [(r.kind, r.text) for r in failed][-1] == (Kind.NOTICE, "Failed: the model could not be reached")
    assert rows_from_task_file(task)[-1].text == "The transcript ends here: the task did not finish."


async def test_tool_arguments_nested_past_what_json_can_follow_still_show_live_and_reloaded(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    """A model's call whose arguments are lists in lists 5,000 deep (a model steered by a page can write
    anything): the call fails with words, and the chat, live or opened again, shows it as it came. Before, the
    turn ended in 'Internal error: RecursionError'."""
    deep = "[" * 5_000 + "]" * 5_000
    fake.add({"tool_calls": [{"name": "read_file", "arguments": deep}], "chunk": 4_000},
             {"content": "That did not work."})
    await chat.send("read it")
    end = await chat.wait_end()
    assert getattr(end, "content", None) == "That did not work."
    transcript = live(chat, "read it")
    tool = transcript.rows[1].tool
    assert tool is not None and tool.ok is False and "arguments" in (tool.result or "")
    assert shown(transcript.rows) == reloaded(core, chat)

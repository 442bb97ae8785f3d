"""Background tasks through real turns against the scripted model: the origin chat is told of the result,
tasks past the limit wait, the same spawn twice is one task, /stop, /new and quitting stop them (and the
commands they run), /tasks lists them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from typing import Any

from desktop.conversation.transcript import Kind, rows_from_messages
from desktop.core import Core, build_core
from desktop.kernel.bus import TurnFinished
from desktop.subagents import Subagents
from desktop.subagents.events import BackgroundTasks
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI, Step, last_user_text

BACKGROUND = "# Background task"  # how our subagent prompt starts: tells the scripted model who is asking


def is_subagent(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith(BACKGROUND)


def answered_tool(body: dict[str, Any]) -> bool:
    return body["messages"][-1].get("role") == "tool"


def model(spawns: list[dict[str, str]], subagent: Step | None = None) -> Any:
    """The chat spawns `spawns` in one step and then says so; each subagent answers `subagent` (or a report
    naming its task); a subagent result is summarised for the user."""
    def reply(body: dict[str, Any]) -> Step:
        if is_subagent(body):
            if answered_tool(body):
                return {"content": "Report: the command ran."}
            return subagent or {"content": f"Report on: {last_user_text(body).splitlines()[-1]}"}
        text = last_user_text(body)
        if "[Background task" in text:
            return {"content": "Summary for you: " + text.split("Report:\n", 1)[-1].splitlines()[0]}
        if answered_tool(body):
            return {"content": "I started that in the background."}
        return {"tool_calls": [{"name": "spawn", "arguments": args} for args in spawns]}
    return reply


async def until(predicate: Any, timeout: float = 60) -> None:
    async def wait() -> None:
        while not predicate():
            await asyncio.sleep(0.02)
    await asyncio.wait_for(wait(), timeout)


def saved(core: Core, key: str) -> list[dict[str, Any]]:
    path = core.sessions.path_for(key)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def running_commands(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=30).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


async def test_a_result_is_told_in_the_chat_that_asked(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.default = model([{"task": "count the files in the workspace", "label": "Count files"}])
    end = await chat.ask("how many files do I have?")
    assert isinstance(end, TurnFinished) and end.content == "I started that in the background."
    await until(lambda: any(m.get("content") == "Summary for you: Report on: count the files in the workspace"
                            for m in saved(core, chat.key)))
    messages = saved(core, chat.key)
    told = next(m for m in messages if m.get("kind") == "subagent_result")
    assert "Count files" in told["content"] and "count the files in the workspace" in told["content"]
    (task,) = core.get(Subagents).of(chat.key)
    assert task.status == "done" and task.label == "Count files"
    lines = [json.loads(line) for line in core.get(Subagents).transcript(task.id).read_text().splitlines()]
    assert lines[0]["_type"] == "task" and lines[-1] == {"_type": "end", "status": "done",
                                                         "result": "Report on: count the files in the workspace"}
    sub_request = next(r for r in fake.requests if is_subagent(r))
    offered = {t["function"]["name"] for t in sub_request["tools"]}
    assert "exec" in offered and not offered & {"spawn", "message", "cron"}
    assert "<name>cron</name>" not in sub_request["messages"][0]["content"]  # its skill calls a tool it lacks
    assert "<name>cron</name>" in fake.requests[0]["messages"][0]["content"]  # the chat has the tool and skill
    assert len(sub_request["messages"]) == 2  # no conversation history: the task alone


async def test_tasks_past_the_limit_wait_and_the_same_task_twice_is_one(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    core.config.max_subagents = 1
    reporting = threading.Event()  # the tasks' reports are held until the test has seen one run and one wait:
    # a fixed delay was outlasted by the chat's own turn on a loaded machine (the first task already done)
    fake.default = model([{"task": "first job"}, {"task": "second job"}, {"task": "first job"}],
                         subagent={"content": "Report: finished.", "after": reporting})
    await chat.ask("do both")
    tasks = core.get(Subagents).of(chat.key)
    assert len(tasks) == 2  # "first job" twice is one task
    results = [m["content"] for m in saved(core, chat.key) if m.get("role") == "tool"]
    assert "started" in results[0] and "queued" in results[1] and results[2] == results[0]
    assert [t.status for t in tasks] == ["running", "queued"]
    reporting.set()
    await until(lambda: all(t.status == "done" for t in tasks))
    counts = [len(e.running) for e in chat.of(BackgroundTasks)]  # what the tray shows
    assert max(counts) == 1 and counts[-1] == 0


async def test_stop_ends_the_chats_tasks_and_their_commands(chat: Conversation, core: Core,
                                                            fake: FakeOpenAI) -> None:
    fake.default = model([{"task": "wait a long time", "label": "Waiting"}],
                         subagent={"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 31.25"}}]})
    await chat.ask("start it")
    await until(lambda: running_commands("sleep 31.25"))
    end = await chat.ask("/stop")
    assert end.content == "Stopped 1 background task."  # type: ignore[union-attr]
    (task,) = core.get(Subagents).of(chat.key)
    await until(lambda: task.status == "cancelled" and not running_commands("sleep 31.25"))
    listed = (await chat.ask("/tasks")).content  # type: ignore[union-attr]
    assert "**Waiting**" in listed and "cancelled" in listed


async def test_events_say_which_task_does_what_now(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.default = model([{"task": "list the workspace", "label": "Look around"}],
                         subagent={"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 0.5; ls"}}]})
    await chat.ask("look around for me")
    (task,) = core.get(Subagents).of(chat.key)
    await until(lambda: task.status == "done")
    snapshots = [s for e in chat.of(BackgroundTasks) for s in e.tasks if s.origin == chat.key]
    assert {s.id for s in snapshots} == {task.id} and {s.label for s in snapshots} == {"Look around"}
    assert {s.origin for s in snapshots} == {chat.key}
    steps = [s.step for s in snapshots if s.status == "running"]
    assert "exec: sleep 0.5; ls" in steps  # the tool it runs and on what, while it runs
    assert steps[-1] == ""  # after the tool, back to the model: no stale step
    last = snapshots[-1]
    assert last.status == "done" and last.result == "Report: the command ran." and last.finished is not None
    assert not last.step and last.started <= last.finished


async def test_new_and_quitting_stop_tasks(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.default = model([{"task": "a long wait"}],
                         subagent={"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 32.25"}}]})
    await chat.ask("start one")
    await until(lambda: running_commands("sleep 32.25"))
    await chat.ask("/new")
    await until(lambda: [t.status for t in core.get(Subagents).of(chat.key)] == ["cancelled"]
                and not running_commands("sleep 32.25"))

    other = Conversation(core, chat_id="other")
    fake.default = model([{"task": "another wait"}],
                         subagent={"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 33.25"}}]})
    await other.ask("start another")
    await until(lambda: running_commands("sleep 33.25"))
    await core.close()
    assert not running_commands("sleep 33.25")
    assert all(t.status == "cancelled" for t in core.get(Subagents).of(other.key))


async def test_a_task_quitting_stopped_is_said_in_its_chat(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """Quitting stopped a running task and a waiting one, and their chat kept only "I started that in the
    background": after a restart no result ever came, and nothing said why. Now the chat says they were stopped."""
    core.config.max_subagents = 1
    fake.default = model([{"task": "tidy the downloads", "label": "Tidy"}, {"task": "sort the photos", "label": "Photos"}],
                         subagent={"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 34.25"}}]})
    await chat.ask("tidy up and sort")
    await until(lambda: running_commands("sleep 34.25"))
    await core.close()
    notes = [m for m in saved(core, chat.key) if m.get("kind") == "notice"]
    assert [m["content"].splitlines()[0] for m in notes] == [
        "[Background task “Tidy” stopped: the app quit before it finished]",
        "[Background task “Photos” stopped: the app quit before it started]"]
    assert "Task: tidy the downloads" in notes[0]["content"]
    assert not list(core.get(Subagents).directory.glob("open-*.json"))  # nothing left for the next start to say


async def test_a_result_that_came_as_the_app_quit_is_in_its_chat_after_a_restart(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """A task finished while another turn of its chat ran, and the app quit before that turn took its report in:
    the report waited behind the turn, quitting dropped it, and after a restart the chat never said the task had
    finished (only its transcript kept the result). Now the chat shows it, with the report as the task wrote it."""
    held = threading.Event()  # the chat's second answer is held until the test is done
    try:
        def reply(body: dict[str, Any]) -> Step:
            if is_subagent(body):
                return {"content": "Report: 42 files, the largest is notes.txt.", "delay": 0.5}
            if last_user_text(body) == "and something long meanwhile":
                return {"content": "A long answer.", "after": held}
            if answered_tool(body):
                return {"content": "I started that in the background."}
            return {"tool_calls": [{"name": "spawn", "arguments": {"task": "count the files", "label": "Count"}}]}

        fake.default = reply
        await chat.ask("count my files")
        await chat.send("and something long meanwhile")
        (task,) = core.get(Subagents).of(chat.key)
        await until(lambda: task.status == "done")
        await asyncio.sleep(0.3)  # its report reaches the chat, behind the running turn
        await core.close()
    finally:
        held.set()

    restarted = build_core()
    session = await restarted.sessions.load(chat.key)
    rows = rows_from_messages(session.messages)
    assert any(r.kind is Kind.NOTICE and "Background task “Count” finished" in r.text for r in rows)
    assert any(r.kind is Kind.ASSISTANT and "Report: 42 files, the largest is notes.txt." in r.text for r in rows)
    assert str(core.get(Subagents).transcript(task.id)) in rows[-1].text  # where its whole run is kept


async def test_a_report_whose_answer_quitting_cut_short_is_shown_after_a_restart(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """The turn telling a task's report was cut short by quitting: the chat kept only "A background task reported
    back", and the result itself was not to be seen. Now the report follows, as the task wrote it."""
    held = threading.Event()
    try:
        def reply(body: dict[str, Any]) -> Step:
            if is_subagent(body):
                return {"content": "Report: the backup is 3 GB."}
            if "[Background task" in last_user_text(body):
                return {"content": "It is 3 GB.", "after": held}
            if answered_tool(body):
                return {"content": "I started that in the background."}
            return {"tool_calls": [{"name": "spawn", "arguments": {"task": "size the backup", "label": "Size"}}]}

        fake.default = reply
        await chat.ask("how big is my backup?")
        await until(lambda: any("[Background task" in last_user_text(r) for r in fake.requests))
        await core.close()
    finally:
        held.set()

    rows = rows_from_messages((await build_core().sessions.load(chat.key)).messages)
    assert any(r.kind is Kind.ASSISTANT and "Report: the backup is 3 GB." in r.text for r in rows)


async def test_a_report_that_joins_a_running_turn_is_shown_as_the_tasks_not_the_persons(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """A report that came while another turn of its chat ran joined that turn, and was saved as the person's own
    message: after a reload the chat showed it as their bubble, the instructions to the model included. Now it is
    the quiet line a report has when it starts a turn of its own."""
    def reply(body: dict[str, Any]) -> Step:
        if is_subagent(body):
            return {"content": "Report: 42 files.", "delay": 0.3}
        if last_user_text(body) == "and tidy up meanwhile":
            return {"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 1.5"}}]}
        if "[Background task" in last_user_text(body):
            return {"content": "The count is done: 42 files."}
        if answered_tool(body):
            return {"content": "I started that in the background."}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "count the files", "label": "Count"}}]}

    fake.default = reply
    await chat.ask("count my files")
    end = await chat.ask("and tidy up meanwhile")
    assert isinstance(end, TurnFinished) and end.content == "The count is done: 42 files."  # it joined that turn
    rows = rows_from_messages((await core.sessions.load(chat.key)).messages)
    assert [r.text for r in rows if r.kind is Kind.USER] == ["count my files", "and tidy up meanwhile"]
    assert any(r.kind is Kind.NOTICE and r.text == "Background task “Count” finished" for r in rows)
    assert next(r for r in fake.requests[-1]["messages"] if "[Background task" in str(r.get("content"))) == {
        "role": "user", "content": next(m["content"] for m in saved(core, chat.key)
                                        if "[Background task" in str(m.get("content")))}  # the model's as before


async def test_a_task_quitting_stopped_while_its_chat_ran_a_turn_is_said_there(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """Quitting stopped a task while a turn of its chat ran: no line was left (it could not be written mid-turn),
    so after a restart the chat said it had started a task that never reported. Now the line comes once the
    turns have stopped."""
    held = threading.Event()
    try:
        def reply(body: dict[str, Any]) -> Step:
            if is_subagent(body):
                return {"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 35.25"}}]}
            if last_user_text(body) == "and something long meanwhile":
                return {"content": "A long answer.", "after": held}
            if answered_tool(body):
                return {"content": "I started that in the background."}
            return {"tool_calls": [{"name": "spawn", "arguments": {"task": "wait", "label": "Wait"}}]}

        fake.default = reply
        await chat.ask("start a wait")
        await until(lambda: running_commands("sleep 35.25"))
        await chat.send("and something long meanwhile")
        await until(lambda: bool(core.busy()))
        await core.close()
    finally:
        held.set()

    notes = [m["content"].splitlines()[0] for m in saved(core, chat.key) if m.get("kind") == "notice"]
    assert notes == ["[Background task “Wait” stopped: the app quit before it finished]"]

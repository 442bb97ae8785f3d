"""The background tasks panel of the chat window, with real tasks started by the scripted model: what runs and
what it does now, what its model calls have used, Cancel, the outcome of a finished one and its transcript, and
that it follows the open chat."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop.conversation.transcript import Kind
from desktop.subagents import Subagents
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.subagents.panel import TaskRow, TasksPanel, readable
from desktop.ui.subagents.transcript import TranscriptDialog
from tests.fakeserver import FakeOpenAI, Step, last_user_text
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip, until
from tests.usage.test_counting import counts

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what a finished task's row looks like
TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
SLOW = "sleep 35.25"  # a command no other test runs, so it can be found among the processes


def scripted(body: dict[str, Any]) -> Step:
    """The chat starts two tasks: "Quick look" reports at once, "Long build" runs SLOW until it is cancelled."""
    first = str(body["messages"][0]["content"])
    last = body["messages"][-1]
    if first.startswith("# Background task"):
        if "build" in last_user_text(body):
            return {"tool_calls": [{"name": "exec", "arguments": {"command": SLOW}}]}
        return {"content": "Found 3 notes in the workspace."}
    if "[Background task" in last_user_text(body):
        return {"content": "Your quick look is done."}
    if last.get("role") == "tool":
        return {"content": "Both are running in the background."}
    return {"tool_calls": [{"name": "spawn", "arguments": {"task": "run the long build", "label": "Long build"}},
                           {"name": "spawn", "arguments": {"task": "look at the notes", "label": "Quick look"}}]}


def panel_of(window: ChatWindow) -> TasksPanel:
    found = window.findChild(TasksPanel)
    assert found is not None
    return found


def rows(window: ChatWindow) -> dict[str, TaskRow]:
    return {row.task.label: row for row in panel_of(window).rows.values()}


async def test_the_panel_shows_steps_cancels_and_opens_the_transcript(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = panel_of(window)
    assert not panel.isVisible()  # no tasks in this chat yet
    fake.default = scripted
    bridge.send(window.current_key, "build it and look at my notes")

    await until(lambda: "Long build" in rows(window) and rows(window)["Long build"].detail.text() == f"exec: {SLOW}",
                timeout=TURN)
    assert panel.isVisible()
    running = rows(window)["Long build"]
    assert running.label.text() == "Long build" and running.time.text().startswith("· 0:")
    assert running.cancel_button.isVisible() and not running.open_button.isVisible()
    assert panel.clock.isActive()  # the running time ticks

    await until(lambda: rows(window)["Quick look"].task.status == "done", timeout=TURN)
    done = rows(window)["Quick look"]
    assert done.detail.text() == "Done: Found 3 notes in the workspace."
    assert done.open_button.isVisible() and not done.cancel_button.isVisible()

    qtbot.mouseClick(running.cancel_button, Qt.MouseButton.LeftButton)
    (task,) = [t for t in bridge.core.get(Subagents).of(window.current_key) if t.label == "Long build"]
    await until(lambda: task.status == "cancelled", timeout=TURN)
    await until(lambda: rows(window)["Long build"].detail.text() == "Cancelled.")
    assert rows(window)["Long build"].open_button.isVisible()
    assert not panel.clock.isActive()  # nothing runs: no timer wakes the app

    qtbot.mouseClick(done.open_button, Qt.MouseButton.LeftButton)
    dialog = window.findChild(TranscriptDialog)
    assert dialog is not None and dialog.isVisible() and dialog.windowTitle() == "Background task: Quick look"
    await until(lambda: dialog.model.loaded)
    assert [(r.kind, r.text) for r in dialog.model.rows] == [  # drawn by the chat's own view
        (Kind.USER, "look at the notes"), (Kind.ASSISTANT, "Found 3 notes in the workspace."), (Kind.NOTICE, "Done.")]
    assert dialog.view.model() is dialog.model
    dialog.close()


async def test_the_panel_follows_the_open_chat(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                               qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.default = scripted
    bridge.send(window.current_key, "build it and look at my notes")
    await until(lambda: len(panel_of(window).rows) == 2, timeout=TURN)
    window.show_session("desktop:another")
    assert not panel_of(window).isVisible() and not panel_of(window).rows
    window.show_session("desktop:test")
    assert panel_of(window).isVisible() and set(rows(window)) == {"Long build", "Quick look"}
    panel_of(window).cancel(rows(window)["Long build"])
    await until(lambda: not rows(window)["Long build"].task.active, timeout=TURN)
    qtbot.mouseClick(rows(window)["Long build"].hide_button, Qt.MouseButton.LeftButton)
    assert set(rows(window)) == {"Quick look"}  # hidden here; /tasks still lists it


async def test_a_task_shows_the_tokens_its_model_calls_have_used(window: ChatWindow, bridge: CoreBridge,
                                                                  fake: FakeOpenAI) -> None:
    def reply(body: dict[str, Any]) -> Step:
        if str(body["messages"][0]["content"]).startswith("# Background task"):
            if body["messages"][-1].get("role") == "tool":
                return {"content": "Built.", "usage": counts(1900, 57)}
            return {"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 2"}}], "usage": counts(500, 20)}
        if body["messages"][-1].get("role") == "tool":
            return {"content": "It is building.", "usage": counts(10, 1)}
        if "[Background task" in last_user_text(body):
            return {"content": "The build is done.", "usage": counts(10, 1)}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "build it", "label": "Build"}}],
                "usage": counts(10, 1)}

    fake.default = reply
    bridge.send(window.current_key, "build it in the background")
    await until(lambda: "Build" in rows(window) and rows(window)["Build"].detail.text() == "exec: sleep 2",
                timeout=TURN)
    running = rows(window)["Build"]
    assert running.usage.isVisible() and running.usage.text() == "· 520 tokens"  # its first call, while it runs
    await until(lambda: rows(window)["Build"].task.status == "done", timeout=TURN)
    assert rows(window)["Build"].usage.text() == "· 2.5k tokens"  # both calls: 520 + 1,957; a local server's,
    # so no price
    if SHOTS:
        panel_of(window).grab().save(os.path.join(SHOTS, "task-usage.png"))


def test_an_outcome_line_shows_the_reports_words_not_its_markdown() -> None:
    assert readable("## Report\n\nThe disk is **40%** full:\n\n- used: 40G\n- free: `60G`") == (
        "The disk is 40% full: • used: 40G • free: 60G")
    assert readable("## Nothing found") == "Nothing found"  # a heading alone is what it says


async def test_a_tasks_words_that_spell_markup_show_as_words_and_load_no_file(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    """The model names a task, chooses its commands and writes its report: spelling <img src="/a/pipe">, the row's
    name, its step, its outcome and the report on hover were read as markup, and Qt read the file they named as
    they were shown: a named pipe froze the app for good. They show as words."""
    folder = Path(tempfile.mkdtemp(prefix="p", dir="/tmp"))  # short: the whole tag fits in a task's name
    pipe = folder / "x"
    label, step, said = f"<IMG SRC='{pipe}'>", f'sleep 3 # <img src="{pipe}">', f"<img src={pipe}>"

    def reply(body: dict[str, Any]) -> Step:
        if str(body["messages"][0]["content"]).startswith("# Background task"):
            if body["messages"][-1].get("role") == "tool":
                return {"content": f"Found `{said}` here."}
            return {"tool_calls": [{"name": "exec", "arguments": {"command": step}}]}
        if body["messages"][-1].get("role") == "tool":
            return {"content": "Started."}
        if "[Background task" in last_user_text(body):
            return {"content": "It is done."}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "look", "label": label}}]}

    fake.default = reply
    try:
        with watched_pipe(pipe) as opened:
            bridge.send(window.current_key, "look in the background")
            await until(lambda: label in rows(window) and rows(window)[label].detail.text() == f"exec: {step}",
                        timeout=TURN, message="the task's step")
            window.grab()  # laid out and painted, as on screen
            running = rows(window)[label]
            shown = [running.label.text(), running.detail.text()]
            await until(lambda: rows(window)[label].task.status == "done", timeout=TURN, message="done")
            window.grab()
            done = rows(window)[label]
            shown += [done.detail.text(), hover_tip(done.detail)]
            panel_of(window).dismiss(done.task.id)
            pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    finally:
        shutil.rmtree(folder)
    assert opened == [], "the task's words read the pipe they named"
    assert shown == [label, f"exec: {step}", f"Done: Found {said} here.", f"Found {said} here."]

"""The chat window against a running core and the scripted model: what a user sees and clicks."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QGuiApplication, QMouseEvent
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox

from desktop.agent.commands import Command
from desktop.conversation.drafts import draft_path
from desktop.conversation.transcript import ChatRow, Kind, rows_from_messages
from desktop.kernel.bus import MessageKind, TurnFinished, TurnStarted
from desktop.mcp import McpServers
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.reminders import Reminders
from desktop.scheduler.schedules import At
from desktop.session.session import Session
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.model import TranscriptModel
from desktop.ui.chat.sidebar import DETAIL_ROLE, KEY_ROLE
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.pipes import watched_pipe
from tests.ui.conftest import STALL, STOPPED_WITHIN, hover_tip, until

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the window looks like there
TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")


def model_of(window: ChatWindow) -> TranscriptModel:
    return window.models[window.current_key]


def kinds(window: ChatWindow) -> list[Kind]:
    return [r.kind for r in model_of(window).rows]


def type_and_send(qtbot, window: ChatWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    qtbot.keyClicks(window.composer.input, text)
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)


def click(qtbot, window: ChatWindow, index: int, action: str) -> None:  # type: ignore[no-untyped-def]
    window.view.viewport().repaint()  # measure what is on screen, as a real paint would
    rect = window.view.control_rect(index, action)
    assert rect is not None, f"row {index} has no {action} control"
    qtbot.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())


def listed_detail(window: ChatWindow, key: str) -> str:
    """What the chat list says under a chat's title (when it was active · how many messages)."""
    items = (window.sidebar.list.item(i) for i in range(window.sidebar.list.count()))
    return next((str(item.data(DETAIL_ROLE)) for item in items if item.data(KEY_ROLE) == key), "")


def saved_messages(bridge: CoreBridge, key: str) -> list[dict]:
    path = bridge.core.sessions.path_for(key)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


async def test_enter_sends_and_the_answer_streams_into_the_transcript(window: ChatWindow, fake: FakeOpenAI,
                                                                      qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Hello **there**, here is the first part and then the rest.", "chunk": 6, "hang": 1.5})
    qtbot.keyClicks(window.composer.input, "first line")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(window.composer.input, "second line")
    assert window.composer.input.toPlainText() == "first line\nsecond line"  # Shift+Enter: newline, not send
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    assert window.composer.input.toPlainText() == ""
    assert kinds(window) == [Kind.USER] and model_of(window).rows[0].text == "first line\nsecond line"

    await until(lambda: len(model_of(window).rows) == 2 and model_of(window).rows[1].text, timeout=TURN)
    partial = model_of(window).rows[1]
    assert partial.kind is Kind.ASSISTANT and partial.streaming and model_of(window).busy
    assert partial.text == "Hello "  # the first streamed piece, shown while the model pauses
    assert window.composer.stop_button.isVisible()
    window.view.viewport().repaint()

    await until(lambda: not model_of(window).busy, timeout=TURN)
    assert partial.text == "Hello **there**, here is the first part and then the rest." and not partial.streaming
    assert kinds(window) == [Kind.USER, Kind.ASSISTANT]
    assert not window.composer.stop_button.isVisible()
    assert last_user_text(fake.requests[-1]) == "first line\nsecond line"


async def test_tool_calls_show_as_rows_with_status_and_duration(window: ChatWindow, fake: FakeOpenAI,
                                                                bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo tool-output-here"}},
                             {"name": "no_such_tool", "arguments": {"x": 1}}]},
             {"content": "Done."})
    type_and_send(qtbot, window, "run it")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    assert kinds(window) == [Kind.USER, Kind.TOOL, Kind.TOOL, Kind.ASSISTANT]
    ok_row, bad_row = model_of(window).rows[1], model_of(window).rows[2]
    assert ok_row.tool and ok_row.tool.name == "exec" and ok_row.tool.ok is True
    assert ok_row.tool.seconds is not None and "tool-output-here" in (ok_row.tool.result or "")
    assert model_of(window).data(model_of(window).index(1)) == "exec echo tool-output-here"
    assert bad_row.tool and bad_row.tool.ok is False
    reloaded = rows_from_messages(saved_messages(bridge, "desktop:test"))  # the next start shows the durations too
    assert reloaded[1].tool is not None and reloaded[1].tool.seconds is not None

    collapsed = window.view.row_rect(1).height()
    click(qtbot, window, 1, "toggle")
    assert ok_row.expanded
    window.view.viewport().repaint()
    assert window.view.row_rect(1).height() > collapsed + 40  # arguments and result are shown

    click(qtbot, window, 1, "copy")  # the Copy button of the expanded arguments
    assert json.loads(QGuiApplication.clipboard().text()) == {"command": "echo tool-output-here"}


def save_chat(bridge: CoreBridge, key: str, title: str, at: str) -> None:
    """A chat as an earlier run of the app left it, last active at `at`."""
    lines = [{"_type": "metadata", "key": key, "title": title, "created_at": at, "updated_at": at},
             {"role": "user", "content": title, "timestamp": at}, {"role": "assistant", "content": "ok", "timestamp": at}]
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def test_after_a_start_the_window_opens_on_the_latest_conversation_from_either_window(
        bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The tray click after a start: the chat the person had last, also one begun in the quick prompt (and
    carried into the window with Open in chat); never the app's own background chats."""
    save_chat(bridge, "desktop:older", "A chat-window chat", "2026-11-01T09:00:00+00:00")
    save_chat(bridge, "quick:1a2b", "Asked with the hotkey", "2026-11-02T09:00:00+00:00")
    save_chat(bridge, "system:heartbeat", "Heartbeat", "2026-11-03T09:00:00+00:00")
    started = ChatWindow(bridge)
    qtbot.addWidget(started)
    started.show()
    await until(lambda: started.current_key and started.models[started.current_key].loaded, message="a chat open")
    assert started.current_key == "quick:1a2b"
    assert [r.text for r in started.models["quick:1a2b"].rows] == ["Asked with the hotkey", "ok"]


async def test_a_saved_session_shows_tool_calls_reasoning_and_results(bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    store = bridge.core.sessions
    session = Session("desktop:saved")
    await store.append(session,
                       {"role": "user", "content": "list my notes"},
                       {"role": "assistant", "content": None, "reasoning_content": "I should look.",
                        "tool_calls": [{"id": "c1", "type": "function",
                                        "function": {"name": "list_dir", "arguments": '{"path": "notes"}'}}]},
                       {"role": "tool", "tool_call_id": "c1", "name": "list_dir", "content": "a.md\nb.md", "ok": True},
                       {"role": "assistant", "content": "You have `a.md` and `b.md`."})
    window = ChatWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    window.show_session("desktop:saved")
    await until(lambda: model_of(window).loaded)
    assert kinds(window) == [Kind.USER, Kind.REASONING, Kind.TOOL, Kind.ASSISTANT]
    tool = model_of(window).rows[2].tool
    assert tool is not None and tool.name == "list_dir" and tool.arguments == {"path": "notes"}
    assert tool.ok is True and tool.result == "a.md\nb.md"
    reasoning = model_of(window).rows[1]
    assert not reasoning.expanded
    click(qtbot, window, 1, "toggle")
    assert reasoning.expanded


def hover(window: ChatWindow, index: int, point: QPointF | None = None) -> None:
    """The pointer moves over row `index`, at its centre or `point` (an event as the window system sends it).
    Not qtbot.mouseMove: QTest runs Qt's event loop inside the test's task step, and a task woken then is lost for
    good (asyncio refuses to step it inside another), which hung the loop's close at the end of the test."""
    window.view.viewport().repaint()
    point = point or window.view.row_rect(index).center()
    event = QMouseEvent(QEvent.Type.MouseMove, point, window.view.viewport().mapToGlobal(point),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window.view.viewport(), event)


async def test_message_text_can_be_selected_and_copied(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    model = model_of(window)
    model.add_user("hello")
    model.append(ChatRow(Kind.ASSISTANT, "Some **selectable** answer text.\n\n```\ncode\n```"))
    window.view.viewport().repaint()
    row = window.view.row_rect(1)
    hover(window, 1, row.topLeft() + QPointF(30, 18))
    selector = window.view.selector
    assert selector.isVisible() and selector.toPlainText() == "Some selectable answer text."
    assert selector.geometry().intersects(row.toAlignedRect())
    selector.selectAll()
    qtbot.keyClick(selector, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "Some selectable answer text."
    qtbot.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(5, 5))  # click elsewhere
    assert not selector.isVisible()


async def test_stop_keeps_the_partial_answer_and_ends_the_turn(window: ChatWindow, fake: FakeOpenAI, bridge: CoreBridge,
                                                               qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "The partial answer, and then a long pause before the rest.", "chunk": 12, "hang": STALL})
    type_and_send(qtbot, window, "tell me")
    await until(lambda: Kind.ASSISTANT in kinds(window) and model_of(window).rows[-1].text, timeout=TURN)
    qtbot.mouseClick(window.composer.stop_button, Qt.MouseButton.LeftButton)
    await until(lambda: not model_of(window).busy, timeout=STOPPED_WITHIN, message="the stop")
    answer = model_of(window).rows[-1]
    assert answer.kind is Kind.ASSISTANT and answer.stopped and answer.text.startswith("The partial")
    assert "the rest" not in answer.text
    assert not window.composer.stop_button.isVisible()
    saved = saved_messages(bridge, "desktop:test")
    assert saved[-1]["role"] == "assistant" and saved[-1].get("stopped") and saved[-1]["content"] == answer.text


async def test_esc_mid_answer_stops_it_and_only_then_hides_the_window(window: ChatWindow, fake: FakeOpenAI,
                                                                      qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "The partial answer, and then a long pause before the rest.", "chunk": 12, "hang": STALL})
    type_and_send(qtbot, window, "tell me")
    await until(lambda: Kind.ASSISTANT in kinds(window) and model_of(window).rows[-1].text, timeout=TURN)
    assert "Esc" in window.composer.hint.text() and "Esc" in window.composer.stop_button.toolTip()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
    assert window.isVisible()  # the answer stops; the window stays
    await until(lambda: not model_of(window).busy, timeout=STOPPED_WITHIN, message="the stop")
    answer = model_of(window).rows[-1]
    assert answer.stopped and answer.text.startswith("The partial") and "the rest" not in answer.text
    assert "Esc" not in window.composer.hint.text()  # back to the keys for writing
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
    assert not window.isVisible()  # nothing runs: Esc hides, as before


async def test_a_reminder_whose_model_call_fails_shows_its_own_text_in_the_chat(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    fake.add({"status": 400, "body": {"error": {"message": "model is overloaded", "type": "invalid_request_error"}}})
    reminders = bridge.core.get(Reminders)
    job = await reminders.add("desktop:test", At(datetime.now(UTC) + timedelta(hours=1)), "Call the dentist", "Dentist")
    await reminders.run_now(job.id)
    await until(lambda: not model_of(window).busy and kinds(window)[-1:] == [Kind.ASSISTANT], timeout=TURN)
    shown = model_of(window).rows[-1].text
    assert "Call the dentist" in shown and "could not be reached" in shown
    saved = await bridge.load_chat("desktop:test")
    assert rows_from_messages(saved.messages)[-1].text == shown  # the same after a restart


async def test_a_reminder_that_begins_a_chat_is_its_name_in_the_list_and_the_header(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The open chat is empty (nobody typed in it, or /new emptied it) when a reminder made for it comes due: the
    list and the window's header call it after the reminder, not "New chat" or its key, and what the person
    then types there leaves the name."""
    reminders = bridge.core.get(Reminders)
    job = await reminders.add("desktop:test", At(datetime.now(UTC) + timedelta(hours=1)), "Call the dentist", "Dentist")
    fake.add({"content": "Time to call the dentist."})
    await reminders.run_now(job.id)
    await until(lambda: window.sidebar.title_of("desktop:test") == "Reminder: Dentist", timeout=TURN)
    assert window.title.text() == "Reminder: Dentist"
    fake.add({"content": "Good luck."})
    type_and_send(qtbot, window, "ok, calling now")
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "Good luck.", timeout=TURN)
    await until(lambda: listed_detail(window, "desktop:test").endswith("3 messages"), message="listed again")
    assert window.sidebar.title_of("desktop:test") == window.title.text() == "Reminder: Dentist"
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "chat-begun-by-a-reminder.png"))


async def test_a_reminder_reads_by_its_name_and_when_it_runs_never_by_id(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"tool_calls": [{"name": "cron", "arguments": {"action": "add", "message": "Remind the user to stretch",
                                                            "label": "Stretch", "in": 40}}]},
             {"content": "I'll remind you."})
    type_and_send(qtbot, window, "remind me to stretch in 40 s")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    card = model_of(window).rows[1]
    assert card.tool is not None and card.tool.name == "cron"
    header = [getattr(op, "text", None) for op in window.view.renderer.layout(card, 600).ops]
    assert "Stretch · in 40 s" in header and "add" not in header  # its name and when, not the action

    reminders = bridge.core.get(Reminders)
    [job] = reminders.jobs
    fake.add({"content": "Time to stretch!"})
    await reminders.run_now(job.id)
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "Time to stretch!",
                timeout=TURN)
    divider = model_of(window).rows[-2]
    assert (divider.kind, divider.text) == (Kind.NOTICE, "Reminder “Stretch” came due")
    assert job.id not in divider.text

    saved = rows_from_messages(saved_messages(bridge, "desktop:test"))  # the same after a restart
    assert [(r.kind, r.text) for r in saved[-2:]] == [(Kind.NOTICE, "Reminder “Stretch” came due"),
                                                     (Kind.ASSISTANT, "Time to stretch!")]
    assert "Stretch · in 40 s" in [getattr(op, "text", None) for op in window.view.renderer.layout(saved[1], 600).ops]


async def test_a_failed_turn_shows_the_error_and_retry_sends_the_message_again(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"status": 400, "body": {"error": {"message": "model is overloaded", "type": "invalid_request_error"}}},
             {"content": "Second time lucky."})
    type_and_send(qtbot, window, "please answer")
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    error = model_of(window).rows[-1]
    assert "overloaded" in error.text and not model_of(window).busy
    assert window.view.control_rect(len(kinds(window)) - 1, "settings") is None  # Settings would not help
    reloaded = rows_from_messages(saved_messages(bridge, "desktop:test"))  # as the next start shows it
    assert reloaded[-1].kind is Kind.ERROR and "overloaded" in reloaded[-1].text
    click(qtbot, window, len(model_of(window).rows) - 1, "retry")
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model_of(window).busy, timeout=TURN)
    assert kinds(window) == [Kind.USER, Kind.ASSISTANT]  # the failed turn was replaced, not asked twice
    assert model_of(window).rows[-1].text == "Second time lucky."
    assert last_user_text(fake.requests[-1]) == "please answer"
    assert [m["role"] for m in saved_messages(bridge, "desktop:test")] == ["user", "assistant"]
    assert "please answer" not in json.dumps(fake.requests[-1]["messages"][:-1])  # not sent twice either


async def test_an_error_settings_can_cure_offers_settings_and_stays_after_a_reload(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"status": 401, "body": {"error": {"message": "invalid api key"}}})
    opened: list[bool] = []
    window.settings_requested.connect(lambda: opened.append(True))
    type_and_send(qtbot, window, "hello?")
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    click(qtbot, window, len(kinds(window)) - 1, "settings")
    assert opened == [True]
    reloaded = rows_from_messages(saved_messages(bridge, "desktop:test"))
    assert reloaded[-1].kind is Kind.ERROR and reloaded[-1].fix_in_settings and "API key" in reloaded[-1].text
    fake.add({"content": "Now it works."})
    type_and_send(qtbot, window, "and now?")  # asking something else instead: the old error becomes a note
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model_of(window).busy, timeout=TURN)
    assert Kind.ERROR not in kinds(window) and model_of(window).rows[1].text.startswith("No reply: ")
    assert Kind.ERROR not in [r.kind for r in rows_from_messages(saved_messages(bridge, "desktop:test"))]


async def test_retries_say_so_while_they_wait(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                              qtbot) -> None:  # type: ignore[no-untyped-def]
    bridge.core.config.provider.retry_delays = [0.4, 0.4]
    fake.add({"status": 503, "body": {"error": {"message": "busy"}}}, {"status": 503, "body": {"error": {"message": "busy"}}},
             {"content": "Got there."})
    seen: list[str] = []
    model = model_of(window)
    model.progress_changed.connect(lambda: seen.append(model.progress))
    type_and_send(qtbot, window, "try hard")
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model.busy, timeout=TURN)
    assert [s for s in seen if s] == ["Retrying (2 of 3)…", "Retrying (3 of 3)…"]
    assert model.progress == ""  # back to plain "Working…" once an answer comes


async def test_a_turn_waiting_for_mcp_servers_says_so(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                      qtbot) -> None:  # type: ignore[no-untyped-def]
    """A server still on its first connect: the chat says the turn waits for it, then that it went on without."""
    def edit(config: Any) -> None:
        config.section(McpConfig).startup_wait = 1
        config.section(McpConfig).servers["silent"] = McpServerConfig(command=sys.executable,
                                                       args=["-c", "import time; time.sleep(60)"], timeout=30)

    await bridge.core.settings.update(edit)
    await until(lambda: "silent" in bridge.core.get(McpServers).servers)
    seen: list[str] = []
    model = model_of(window)
    model.progress_changed.connect(lambda: seen.append(model.progress))
    type_and_send(qtbot, window, "what time is it")
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model.busy, timeout=TURN)
    assert [s for s in seen if s] == ["Waiting for MCP servers to connect: silent…",
                                      "Going on without MCP server silent: not connected within 1 s (its tools are "
                                      "offered once connected)"]


async def test_command_replies_and_the_message_tool_show_as_assistant_messages(
        window: ChatWindow, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    type_and_send(qtbot, window, "/help")
    await until(lambda: Kind.ASSISTANT in kinds(window), timeout=TURN)
    assert "/stop" in model_of(window).rows[-1].text

    fake.add({"tool_calls": [{"name": "message", "arguments": {"content": "Working on it, one moment."}}]},
             {"content": "All finished."})
    type_and_send(qtbot, window, "do the thing")
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "All finished.", timeout=TURN)
    texts = [r.text for r in model_of(window).rows if r.kind is Kind.ASSISTANT]
    assert texts[-2:] == ["Working on it, one moment.", "All finished."]


async def test_slash_completion_offers_the_commands(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    qtbot.keyClicks(window.composer.input, "/st")
    popup = window.composer.completer.popup()
    assert popup.isVisible()
    offered = [popup.model().index(i, 0).data() for i in range(popup.model().rowCount())]
    assert [o.split()[0] for o in offered] == ["/status", "/stop"]
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert window.composer.input.toPlainText() == "/stop "
    assert not popup.isVisible()
    assert window.isVisible()  # choosing a command does not send or hide anything
    assert kinds(window) == []


async def test_the_command_list_stays_within_the_window(window: ChatWindow, bridge: CoreBridge, qtbot,  # type: ignore[no-untyped-def]
                                                       tmp_path: Path) -> None:
    long = ("look something up in the team's tracker by its number, title or any words of its description, "
            "across every project the token can read, newest first")
    bridge.core.loop.commands.add(Command("/lookup", long, lambda ctx: None))  # type: ignore[arg-type,return-value]
    window.resize(640, 520)
    window.move(60, 40)
    qtbot.keyClicks(window.composer.input, "/")
    popup = window.composer.completer.popup()
    assert popup.isVisible()
    left, right = window.mapToGlobal(QPoint(0, 0)).x(), window.mapToGlobal(QPoint(window.width(), 0)).x()
    shown = popup.window().geometry()
    assert left <= shown.left() and shown.right() <= right, (left, right, shown)
    rows = [popup.model().index(i, 0) for i in range(popup.model().rowCount())]
    lookup = next(r for r in rows if r.data().startswith("/lookup"))
    assert lookup.data().endswith("…") and lookup.data(Qt.ItemDataRole.ToolTipRole) == long  # whole on hover
    assert not popup.horizontalScrollBar().isVisible()
    window.grab().save(str(tmp_path / "window.png"))
    popup.window().grab().save(str(tmp_path / "commands.png"))


async def test_esc_and_close_hide_the_window(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.composer.input.setFocus()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
    assert not window.isVisible()
    window.show()
    window.close()
    assert not window.isVisible()
    window.focus_input()
    assert window.isVisible() and window.windowTitle() == "Nanobot"


async def test_the_message_being_written_outlives_a_quit_and_is_gone_once_sent(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Typed, not sent, and then the app quits (or crashes, or the session ends): the next start's chat window
    has it in its message box. Sent, it is not offered again."""
    kept = draft_path(bridge.core.home.state_dir, "chat")
    qtbot.keyClicks(window.composer.input, "Dear Sam, the figures for Q3 are")
    await until(lambda: kept.exists() and "figures for Q3 are" in kept.read_text(encoding="utf-8"),
                message="the draft kept as it is typed")
    again = ChatWindow(bridge)  # the next start's window (the file is all it shares with this one)
    qtbot.addWidget(again)
    again.show()
    again.show_session("desktop:again")
    await until(lambda: again.composer.input.toPlainText() == "Dear Sam, the figures for Q3 are",
                message="the draft given back")
    fake.add({"content": "Noted."})
    qtbot.keyClick(again.composer.input, Qt.Key.Key_Return)
    await until(lambda: not kept.exists(), message="the sent message no longer kept as a draft")


async def test_new_rename_and_delete_chats(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                           qtbot) -> None:  # type: ignore[no-untyped-def]
    type_and_send(qtbot, window, "first chat")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)

    qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    key = window.current_key
    assert key.startswith("desktop:") and key != "desktop:test" and kinds(window) == []
    await until(lambda: key in window.sidebar.session_keys())
    type_and_send(qtbot, window, "Plan my week")
    await until(lambda: window.sidebar.title_of(key) == "Plan my week", timeout=TURN)
    assert window.title.text() == "Plan my week"

    window.sidebar.start_rename(key)
    editor = window.sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Plan my week"
    editor.setText("Weekly plan")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    await until(lambda: json.loads(bridge.core.sessions.path_for(key).read_text().splitlines()[0]).get("title")
                == "Weekly plan")
    await until(lambda: window.sidebar.title_of(key) == "Weekly plan")

    window.sidebar.confirm_delete(key)
    box = window.sidebar.delete_box
    assert box is not None and box.isVisible() and "Weekly plan" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: not box.isVisible())
    assert bridge.core.sessions.path_for(key).exists()

    window.sidebar.confirm_delete(key)
    box = window.sidebar.delete_box
    assert box is not None
    box.button(QMessageBox.StandardButton.Yes).click()
    await until(lambda: key not in window.sidebar.session_keys())
    assert not bridge.core.sessions.path_for(key).exists()
    assert window.current_key == "desktop:test" and Kind.ASSISTANT in kinds(window)  # the next chat is shown


async def test_attached_image_reaches_the_model_as_image_content(window: ChatWindow, fake: FakeOpenAI, tmp_path: Path,
                                                                 qtbot) -> None:  # type: ignore[no-untyped-def]
    image = tmp_path / "dot.png"
    image.write_bytes(PNG)
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(image))])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.event(enter)  # QApplication.sendEvent ignores drag events that no real drag started
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.event(drop)
    assert window.composer.attachments == [str(image)]
    type_and_send(qtbot, window, "what is this?")
    assert window.composer.attachments == []
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    assert model_of(window).rows[0].media == (str(image),)
    content = fake.requests[-1]["messages"][-1]["content"]
    assert any(part.get("type") == "image_url" for part in content)


def drop_files(window: ChatWindow, *paths: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    window.event(QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                 Qt.KeyboardModifier.NoModifier))
    window.event(QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier))


async def test_a_dropped_document_reaches_the_model_and_the_bubble_keeps_only_what_was_typed(
        window: ChatWindow, fake: FakeOpenAI, bridge: CoreBridge, tmp_path: Path,
        qtbot) -> None:  # type: ignore[no-untyped-def]
    csv = tmp_path / "budget.csv"
    csv.write_text("item,cost\nrent,900\n", encoding="utf-8")
    drop_files(window, csv, tmp_path)  # a folder cannot be attached: the hint line says so
    assert window.composer.attachments == [str(csv)]
    assert window.composer.hint.text() == f"Not attached: {tmp_path.name} is a folder; attach the files in it instead"
    fake.add({"content": "Rent is the biggest cost."})
    type_and_send(qtbot, window, "biggest cost?")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    said = last_user_text(fake.requests[-1])
    assert "rent,900" in said and "attachments/desktop_test/budget.csv" in said
    assert (bridge.core.workspace / "attachments" / "desktop_test" / "budget.csv").read_text() == csv.read_text()
    assert bubble_text(window, 0) == "biggest cost?"

    reopened = ChatWindow(bridge)
    qtbot.addWidget(reopened)
    reopened.show()
    reopened.show_session("desktop:test")
    await until(lambda: reopened.models["desktop:test"].loaded)
    row = reopened.models["desktop:test"].rows[0]
    assert bubble_text(reopened, 0) == "biggest cost?" and [Path(m).name for m in row.media] == ["budget.csv"]


async def test_ten_thousand_messages_open_and_scroll(bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    key = "desktop:long"
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long"})]
    for i in range(5000):
        lines.append(json.dumps({"role": "user", "content": f"question {i}"}))
        lines.append(json.dumps({"role": "assistant", "content": f"Answer **{i}** with `code` and a list:\n\n- a\n- b"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    window = ChatWindow(bridge)
    qtbot.addWidget(window)
    window.resize(900, 640)
    window.show()
    window.show_session(key)
    await until(lambda: model_of(window).loaded, timeout=30)
    assert model_of(window).rowCount() == 10_000
    window.view.viewport().repaint()
    assert window.view.at_bottom()
    last = window.view.row_rect(9999)
    assert 0 < last.bottom() <= window.view.viewport().height()
    window.view.verticalScrollBar().setValue(0)
    window.view.viewport().repaint()
    assert window.view.row_rect(0).top() == 0 and not window.view.at_bottom()


async def test_without_a_model_the_transcript_area_shows_onboarding(bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    bridge.core.config.model = ""
    window = ChatWindow(bridge)
    qtbot.addWidget(window)
    window.show()
    window.show_session("desktop:first")
    assert window.stack.currentWidget() is not window.view
    bridge.core.config.model = "openai/test"
    window.hide()
    window.show()
    assert window.stack.currentWidget() is window.view


def test_rows_keep_user_messages_in_order(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = TranscriptModel("desktop:x")
    model.add_user("one")
    model.append(ChatRow(Kind.ASSISTANT, "two"))
    assert [model.data(model.index(i)) for i in range(model.rowCount())] == ["one", "two"]
    assert model.last_user() is model.rows[0]


async def test_the_keyboard_finds_its_way_back_to_the_composer(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.activateWindow()
    composer = window.composer.input
    window.view.setFocus()
    qtbot.keyClicks(window.view, "hello")  # typing while the transcript has focus writes in the composer
    assert composer.toPlainText() == "hello"
    assert QApplication.focusWidget() is composer
    assert window.composer.property("focused") is True  # its frame shows where the keyboard is
    window.view.setFocus()
    assert window.composer.property("focused") is False
    composer.setFocus()
    qtbot.keyClick(window.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)  # shortcuts are not typing
    assert composer.toPlainText() == "hello"

    window.view.setFocus()
    qtbot.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, pos=window.view.viewport().rect().center())
    await until(lambda: QApplication.focusWidget() is composer, message="focus back after a click")

    window.view.setFocus()
    window.composer.stop_button.click()
    assert QApplication.focusWidget() is composer


async def test_slash_new_starts_a_new_chat_and_keeps_the_old_one(window: ChatWindow, bridge: CoreBridge,
                                                                 qtbot) -> None:  # type: ignore[no-untyped-def]
    type_and_send(qtbot, window, "Remember the blue door")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    type_and_send(qtbot, window, "/new")
    await until(lambda: kinds(window) == [Kind.ASSISTANT], timeout=TURN, message="an empty chat with the reply")
    assert "Remember the blue door" in model_of(window).rows[0].text  # it says where the old chat went
    assert window.current_key == "desktop:test" and window.composer.input.isEnabled()
    await until(lambda: len(window.sidebar.session_keys()) == 2, message="the old chat is listed")
    (kept,) = [k for k in window.sidebar.session_keys() if k != "desktop:test"]
    assert window.sidebar.title_of(kept) == "Remember the blue door"

    restarted = type(bridge.core.sessions)(bridge.core.sessions.directory)  # as the next start reads it
    assert [m["content"] for m in (await restarted.load(kept)).messages][0] == "Remember the blue door"
    window.show_session(kept)
    await until(lambda: kinds(window) == [Kind.USER, Kind.ASSISTANT], message="the old chat opens with its messages")


async def test_a_running_tool_shows_how_long_it_has_run(window: ChatWindow, fake: FakeOpenAI,
                                                       qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 2.5"}}]}, {"content": "Slept."})
    type_and_send(qtbot, window, "take a nap")

    def header() -> str:
        rows = model_of(window).rows
        if len(rows) < 2 or rows[1].tool is None:
            return ""
        layout = window.view.renderer.layout(rows[1], 600)
        return " ".join(op.text for op in layout.ops if isinstance(getattr(op, "text", None), str))

    await until(lambda: "running… 1 s" in header(), timeout=TURN, message="the running time counts up")
    await until(lambda: not model_of(window).busy, timeout=TURN)
    assert "running" not in header() and " s" in header()  # the final duration replaces it


async def test_a_running_command_shows_what_it_prints(window: ChatWindow, fake: FakeOpenAI,
                                                       qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo compiling; sleep 2; echo done"}}]},
             {"content": "Built."})
    type_and_send(qtbot, window, "build it")
    await until(lambda: len(model_of(window).rows) > 1 and model_of(window).rows[1].tool is not None
                and model_of(window).rows[1].tool.tail == "compiling", timeout=TURN, message="the live output")
    row = model_of(window).rows[1]
    assert row.tool is not None and row.tool.ok is None  # still running
    layout = window.view.renderer.layout(row, 600)
    assert "Output so far" in [getattr(op, "text", None) for op in layout.ops]
    await until(lambda: not model_of(window).busy, timeout=TURN)


def test_a_background_result_in_a_saved_chat_is_a_quiet_line_not_a_question() -> None:
    rows = rows_from_messages([
        {"role": "user", "content": "[Background task “Count files” finished]\nTask: count\n\nReport:\n3",
         "kind": "subagent_result"},
        {"role": "assistant", "content": "It found 3 files."}])
    assert [(r.kind, r.text) for r in rows] == [(Kind.NOTICE, "Background task “Count files” finished"),
                                               (Kind.ASSISTANT, "It found 3 files.")]


def test_a_turn_the_app_started_says_so_and_is_not_the_persons_to_redo(qtbot) -> None:  # type: ignore[no-untyped-def]
    model = TranscriptModel("desktop:t")
    model.load(rows_from_messages([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    assert model.redoable()
    model.apply(TurnStarted("desktop:t", MessageKind.SUBAGENT_RESULT))
    model.apply(TurnFinished("desktop:t", "Your task found 3 files."))
    assert [(r.kind, r.text) for r in model.rows][-2:] == [(Kind.NOTICE, "A background task reported back"),
                                                           (Kind.ASSISTANT, "Your task found 3 files.")]
    assert not model.redoable()  # Regenerate would ask the person's old question instead


VERBATIM = "  Shopping list:\nmilk\n\n    *eggs* and _ham_\n# not a heading\n<b>bold?</b> 2 * 3 = 6\n- [ ] a box"


def bubble_text(window: ChatWindow, index: int) -> str:
    return "\n".join(placed.doc.toPlainText() for placed in window.view.row_layout(index).docs)


async def test_the_persons_text_shows_verbatim_live_and_after_a_reload(
        window: ChatWindow, fake: FakeOpenAI, bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Noted: *eggs* and **ham**."})
    window.composer.input.setPlainText(VERBATIM + "\n\n")
    qtbot.mouseClick(window.composer.send_button, Qt.MouseButton.LeftButton)
    await until(lambda: not model_of(window).busy and len(model_of(window).rows) == 2, timeout=TURN)
    assert bubble_text(window, 0) == VERBATIM  # line breaks, the indent and every * _ # < > as typed
    assert bubble_text(window, 1) == "Noted: eggs and ham."  # the answer stays Markdown
    assert last_user_text(fake.requests[-1]) == VERBATIM

    reopened = ChatWindow(bridge)
    qtbot.addWidget(reopened)
    reopened.resize(900, 640)
    reopened.show()
    reopened.show_session("desktop:test")
    await until(lambda: reopened.models["desktop:test"].loaded)
    assert bubble_text(reopened, 0) == VERBATIM


async def test_a_commands_summary_that_spells_markup_shows_on_hover_as_words_and_loads_no_file(
        window: ChatWindow, bridge: CoreBridge, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An MCP server's prompts are offered as commands, described in its words: a description spelling
    <img src="/a/pipe"> was read as markup by the command list's tooltip, and Qt read the file it named as the
    tooltip was shown (a named pipe froze the app for good). It shows the words, and the line shows them too."""
    pipe = tmp_path / "pipe"
    summary = f"summarise <img src=\"{pipe}\"> and <IMG SRC='{pipe}'>"
    bridge.core.loop.commands.add(Command("/brief", summary, lambda ctx: None))  # type: ignore[arg-type,return-value]
    with watched_pipe(pipe) as opened:
        qtbot.keyClicks(window.composer.input, "/bri")
        popup = window.composer.completer.popup()
        assert popup.isVisible()
        row = popup.model().index(0, 0)
        line = row.data()
        tip = hover_tip(popup.viewport(), popup.visualRect(row).center())
        popup.hide()
        window.composer.input.clear()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert line.startswith("/brief   summarise <img")
    assert tip == summary
    assert opened == [], "the command list read the pipe a description named"


async def test_a_question_sent_into_the_open_chat_from_elsewhere_shows_before_its_answer(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The quick prompt opened from a chat asks in that chat: the chat window showed only the answer, as if it
    answered the question before (until the chat was read again). The person's own messages, a command that
    answers itself and a retry still show once each."""
    fake.add({"content": "Oslo."}, {"content": "Bergen, on the west coast."}, {"content": "Bergen, still."})
    type_and_send(qtbot, window, "/help")
    await until(lambda: Kind.ASSISTANT in kinds(window), timeout=TURN)
    type_and_send(qtbot, window, "Capital of Norway?")
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "Oslo.", timeout=TURN)
    bridge.send(window.current_key, "And its second city?")  # as the quick prompt sends into this chat
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text.startswith("Bergen"),
                timeout=TURN)
    shown = [(row.kind, row.text) for row in model_of(window).rows if row.kind in (Kind.USER, Kind.ASSISTANT)]
    assert shown[0] == (Kind.USER, "/help") and shown[2:] == [
        (Kind.USER, "Capital of Norway?"), (Kind.ASSISTANT, "Oslo."),
        (Kind.USER, "And its second city?"), (Kind.ASSISTANT, "Bergen, on the west coast.")]

    window.retry(model_of(window).rows[-1])  # Regenerate: asked again in its place, not shown twice
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "Bergen, still.",
                timeout=TURN)
    assert [row.text for row in model_of(window).rows if row.kind is Kind.USER] == [
        "/help", "Capital of Norway?", "And its second city?"]

"""The app shell in process (offscreen, so there is no tray host): start-up, background replies,
notifications (held by Do not disturb, grouped when several come at once, opening their chat at their message),
requests from later launches, settings edits, missing windows and Quit."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon, QWidget

from desktop.conversation.transcript import Kind
from desktop.kernel.bus import TurnFinished
from desktop.kernel.notices import Notice, OpenChat, OpenMemoryChange, Target
from desktop.kernel.paths import home
from desktop.memory import Memory
from desktop.shell_state import load_state, state_path
from desktop.ui import app as app_module
from desktop.ui.app import Shell
from desktop.ui.hotkey import HotkeyStatus
from desktop.ui.icons import TrayState
from desktop.ui.notifier import GROUP_SECONDS
from desktop.ui.subagents.panel import TasksPanel
from tests.fakeserver import FakeOpenAI
from tests.ui.approvals.test_cards import cards_of
from tests.ui.conftest import new_shell as _new_shell
from tests.ui.conftest import until


def _visible_boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def _record_notifications(shell: Shell) -> list[tuple[str, str, Target | None]]:
    sent: list[tuple[str, str, Target | None]] = []
    original = shell.notifier.notify

    def record(note: Notice) -> bool:
        sent.append((note.title, note.body, note.target))
        return original(note)

    shell.notifier.notify = record  # type: ignore[method-assign]
    return sent


def _tray_entry(shell: Shell, label: str) -> QAction:
    """A tray menu entry, as the user picks it."""
    return next(action for action in shell.tray.menu.actions() if action.text() == label)


def _break_memory_window(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory window's module is missing from this build."""
    def build() -> QWidget:
        import desktop.ui.no_such_window  # type: ignore[import-not-found]  # noqa: F401
        raise AssertionError("unreachable")
    monkeypatch.setitem(shell._builders, "memory", build)


async def _memory_edited_unsaved(shell: Shell, qtbot) -> QWidget:  # type: ignore[no-untyped-def]
    """The memory window (opened by the test) once MEMORY.md is shown, Edit clicked and words typed, not saved."""
    window = shell.window("memory")
    assert window is not None
    tab = window.memory  # type: ignore[attr-defined]
    await until(lambda: "Long-term memory" in tab.view.toPlainText(), message="MEMORY.md shown")
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(tab.editor, "Atlas runs on Postgres 16")
    return window


def _record_balloons(shell: Shell) -> list[tuple[str, str]]:
    """What reaches the screen: without a session bus (as here) the notifier shows tray balloons."""
    shown: list[tuple[str, str]] = []
    shell.tray.icon.showMessage = lambda title, body, *_: shown.append((title, body))  # type: ignore[method-assign]
    return shown


async def test_without_a_tray_the_chat_opens_with_a_one_time_explanation(shell: Shell) -> None:
    chat = shell.window("chat")
    assert chat is not None and chat.isVisible()
    assert [box.windowTitle() for box in _visible_boxes()] == ["No system tray"]
    await until(lambda: load_state(state_path(shell.home)).no_tray_explained)


async def test_a_reply_finished_out_of_sight_is_announced(shell: Shell, fake: FakeOpenAI) -> None:
    sent = _record_notifications(shell)
    chat = shell.window("chat")
    assert chat is not None
    chat.hide()
    done: list[TurnFinished] = []
    shell.bridge.event.connect(lambda e: done.append(e) if isinstance(e, TurnFinished) else None)
    fake.add({"content": "The long job is finished.", "delay": 0.3})
    shell.bridge.send("desktop:background", "do the long job")
    await until(lambda: sent, timeout=30)
    saved = await shell.core.sessions.load("desktop:background")  # type: ignore[union-attr]
    assert saved.messages[-1]["content"] == "The long job is finished."  # the click opens the chat at it:
    assert sent == [("do the long job", "The long job is finished.",
                     OpenChat("desktop:background", len(saved.messages) - 1))]
    assert shell.tray.state is TrayState.ATTENTION
    shell.show_chat("desktop:background")  # what clicking the notification does
    assert chat.isVisible() and shell.tray.state is TrayState.IDLE

    await until(chat.isActiveWindow, timeout=5, message="the chat in front")
    fake.add({"content": "Seen as it happens."})  # with the chat in front: no notification
    shell.bridge.send("desktop:background", "and now?")
    await until(lambda: len(done) == 2, timeout=30)
    shell.show_chat("desktop:elsewhere")  # another chat shown: the next answer in this one is announced
    fake.add({"content": "Out of sight again."})
    shell.bridge.send("desktop:background", "one more")
    await until(lambda: len(sent) == 2, timeout=30)
    assert [body for _, body, _ in sent] == ["The long job is finished.", "Out of sight again."]


async def test_a_failed_turn_out_of_sight_is_announced_too(shell: Shell, fake: FakeOpenAI) -> None:
    sent = _record_notifications(shell)
    shell.window("chat").hide()  # type: ignore[union-attr]
    fake.add({"status": 400, "body": {"error": {"message": "model does not exist"}}})
    shell.bridge.send("desktop:broken", "hello?")
    await until(lambda: sent, timeout=30)
    assert sent[0][0] == "hello?: reply failed" and sent[0][2] == OpenChat("desktop:broken", 1)
    assert "model does not exist" in sent[0][1]


async def test_do_not_disturb_holds_notifications_then_shows_them_as_one(shell: Shell) -> None:
    balloons = _record_balloons(shell)
    shell.tray.dnd_action.trigger()
    await until(lambda: load_state(state_path(shell.home)).do_not_disturb)
    publish = shell.core.bus.publish  # type: ignore[union-attr]
    for title, body in (("Garden", "Water the tomatoes."), ("Taxes", "The form is ready."), ("Heartbeat", "All fine.")):
        publish(Notice(title, body, OpenChat(f"desktop:{title.lower()}", 3)))  # what a background feature does
    publish(Notice("Trip: allow exec?", "touch a", OpenChat("desktop:trip"), (("allow", "Allow once"),),
                   lambda _action: None, lambda _withdraw: None))  # a question is not held: it waits on its card
    await asyncio.sleep(GROUP_SECONDS + 0.3)
    assert balloons == []
    assert "3 notifications held" in shell.tray.icon.toolTip().splitlines()
    assert shell.tray.held_action.isVisible() and shell.tray.held_action.text() == "3 notifications held"
    assert shell.tray.state is TrayState.ATTENTION  # the icon still says something is waiting

    shell.tray.dnd_action.trigger()  # Do not disturb off: what it held, as one notification
    assert balloons == [("3 updates: Garden, Taxes, Heartbeat",
                         "Garden: Water the tomatoes.\nTaxes: The form is ready.\nHeartbeat: All fine.")]
    assert "held" not in shell.tray.icon.toolTip() and not shell.tray.held_action.isVisible()
    shell.tray.icon.messageClicked.emit()  # a click on the group opens the most recent one's chat
    chat = shell.window("chat")
    assert chat is not None and chat.isVisible() and chat.current_key == "desktop:heartbeat"  # type: ignore[attr-defined]
    await asyncio.sleep(GROUP_SECONDS + 0.3)
    assert len(balloons) == 1


async def test_several_notifications_at_once_are_one_and_one_alone_is_itself(shell: Shell) -> None:
    balloons = _record_balloons(shell)
    publish = shell.core.bus.publish  # type: ignore[union-attr]
    publish(Notice("Garden", "Watered.", OpenChat("desktop:garden")))
    publish(Notice("Taxes", "Filed.", OpenChat("desktop:taxes")))
    publish(Notice("Memory updated", "", None))
    await until(lambda: balloons, timeout=5)
    await asyncio.sleep(GROUP_SECONDS + 0.3)  # nothing else follows
    assert balloons == [("3 updates: Garden, Taxes, Memory updated", "Garden: Watered.\nTaxes: Filed.\nMemory updated")]
    shell.tray.icon.messageClicked.emit()
    assert shell.window("chat").current_key == "desktop:taxes"  # type: ignore[union-attr]  # newest with a chat
    publish(Notice("Garden", "Watered again.", OpenChat("desktop:garden")))
    await until(lambda: len(balloons) == 2, timeout=5)
    assert balloons[1] == ("Garden", "Watered again.")


async def test_start_up_problems_come_through_the_notifier(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    """A taken hotkey and a missing window are notifications like any other (Do not disturb holds them), not
    tray balloons of their own."""
    balloons = _record_balloons(shell)

    async def taken(chord: str) -> HotkeyStatus:
        return HotkeyStatus("x11", chord, False, f"{chord} is already taken by another program")
    monkeypatch.setattr(shell.hotkey, "bind", taken)
    _break_memory_window(shell, monkeypatch)
    shell.tray.dnd_action.trigger()
    await shell.core.settings.update(lambda config: setattr(config, "hotkey", "Ctrl+Alt+K"))  # type: ignore[union-attr]
    _tray_entry(shell, "Memory && history").trigger()
    await until(lambda: len(shell.notifier.held) == 2)
    assert balloons == []
    shell.tray.dnd_action.trigger()
    [(title, body)] = balloons
    assert title == "2 updates: Global hotkey unavailable, Window not available"
    assert "Ctrl+Alt+K is already taken" in body and "The memory window is not available" in body


async def _long_chat(shell: Shell, key: str, exchanges: int) -> None:
    sessions = shell.core.sessions  # type: ignore[union-attr]
    session = await sessions.load(key)
    for n in range(exchanges):
        await sessions.append(session, {"role": "user", "content": f"Question {n}"},
                              {"role": "assistant", "content": f"Answer {n}\n\n" + "More words. " * 60})


def _in_view(chat: Any, text: str) -> bool:
    """Whether the row with `text` is (at least partly) in the transcript's view."""
    view = chat.view
    row = next(i for i, r in enumerate(view.model().rows) if r.text == text)
    rect = view.row_rect(row)
    return bool(rect.bottom() > 0 and rect.top() < view.viewport().height())


async def test_a_clicked_notification_opens_its_chat_at_its_message(shell: Shell, fake: FakeOpenAI) -> None:
    await _long_chat(shell, "desktop:long", 30)
    target = OpenChat("desktop:long", 5)  # the answer of the third exchange
    shell.notifier.activated.emit(target)
    chat = shell.window("chat")
    assert chat is not None and chat.isVisible() and chat.current_key == "desktop:long"  # type: ignore[attr-defined]
    answer = "Answer 2\n\n" + "More words. " * 60
    await until(lambda: chat.models["desktop:long"].loaded and _in_view(chat, answer))  # type: ignore[attr-defined]
    assert not chat.view.at_bottom()  # type: ignore[attr-defined]

    # An answer that came in while the chat was hidden (its rows built live) is found too.
    sent = _record_notifications(shell)
    chat.hide()
    fake.add({"content": "The short answer."}, {"content": "A long one.\n\n" + "Many lines.\n\n" * 80})
    shell.bridge.send("desktop:long", "short, please")
    await until(lambda: len(sent) == 1, timeout=30)
    shell.bridge.send("desktop:long", "and a long one")
    await until(lambda: len(sent) == 2, timeout=30)
    first = sent[0][2]
    assert first == OpenChat("desktop:long", 61)
    shell.notifier.activated.emit(first)
    await until(lambda: chat.models["desktop:long"].loaded and _in_view(chat, "The short answer."))  # type: ignore[attr-defined]
    assert not chat.view.at_bottom()  # type: ignore[attr-defined]


async def _started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Shell, asyncio.Future[int]]:
    made = _new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(made.run())
    await until(lambda: made.core is not None and made.core.running, timeout=60)
    return made, task


async def test_closing_the_chat_says_once_that_the_app_stays_in_the_tray(
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))  # a tray host
    for run in range(2):  # the second run is after a restart
        shell, task = await _started(tmp_path, monkeypatch)
        sent = _record_notifications(shell)
        shell.show_chat()
        chat = shell.window("chat")
        assert chat is not None
        if run == 0:  # with Do not disturb on it waits for a close that can say it now
            shell.tray.dnd_action.trigger()
            chat.close()
            assert sent == [] and not shell.notifier.held
            shell.tray.dnd_action.trigger()
            shell.show_chat()
        chat.close()
        assert not chat.isVisible() and not shell._quit.is_set()  # hidden, not quit
        if run == 0:
            assert [title for title, _, _ in sent] == ["Nanobot Tray is still running"]
            await until(lambda: load_state(state_path(home())).tray_close_explained)
        shell.show_chat()
        chat.close()
        assert sent == ([("Nanobot Tray is still running", app_module.TRAY_CLOSE_TEXT, None)] if run == 0 else [])
        shell.quit()
        assert await asyncio.wait_for(task, 30) == 0
        for widget in QApplication.topLevelWidgets():
            widget.close()


async def test_the_tray_icon_raises_a_covered_chat_and_hides_only_the_active_one(
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        qtbot) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))  # a tray host
    shell, task = await _started(tmp_path, monkeypatch)
    click = QSystemTrayIcon.ActivationReason.Trigger
    shell.tray.icon.activated.emit(click)
    chat = shell.window("chat")
    assert chat is not None
    await until(lambda: chat.isVisible() and chat.isActiveWindow(), timeout=5, message="the chat to come up")
    other = QWidget()  # another app's window, in front of the chat
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    await until(lambda: other.isActiveWindow() and not chat.isActiveWindow(), timeout=5, message="the chat covered")
    shell.tray.icon.activated.emit(click)
    assert chat.isVisible()  # covered, not hidden: the click brings it back
    await until(chat.isActiveWindow, timeout=5, message="the chat raised and focused")
    shell.tray.icon.activated.emit(click)
    assert not chat.isVisible()  # the active chat: the click puts it away
    shell.quit()
    assert await asyncio.wait_for(task, 30) == 0


async def test_later_launches_open_the_quick_prompt_prefilled(shell: Shell, caplog: pytest.LogCaptureFixture) -> None:
    shell.handle({"action": "quick", "text": "what's the weather?"})
    quick = shell.window("quick")
    assert quick is not None and quick.isVisible()
    assert quick.input.text() == "what's the weather?"  # type: ignore[attr-defined]
    with caplog.at_level(logging.WARNING):
        shell.handle({"action": "dance"})
    assert "ignored an unknown request" in caplog.text


async def test_a_missing_window_is_a_log_line_not_a_crash(shell: Shell, monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    _break_memory_window(shell, monkeypatch)
    with caplog.at_level(logging.ERROR):
        _tray_entry(shell, "Memory && history").trigger()
    assert "the memory window is not available: ModuleNotFoundError" in caplog.text
    shell.tray.quick_prompt.emit()  # everything else keeps working
    assert shell.window("quick").isVisible()  # type: ignore[union-attr]


async def test_a_hand_edit_reaches_the_tray_and_the_agent_without_restart(shell: Shell, home_dir: Path,
                                                                         fake: FakeOpenAI) -> None:
    config_file = home_dir / "config.yaml"
    settings = yaml.safe_load(config_file.read_text())
    settings["model"] = "openai/another-model"
    config_file.write_text(yaml.safe_dump(settings))
    await until(lambda: "Model: openai/another-model" in shell.tray.icon.toolTip(), timeout=10)
    finished: list[object] = []
    shell.bridge.event.connect(lambda e: finished.append(e) if isinstance(e, TurnFinished) else None)
    shell.bridge.send("desktop:edited", "hello")
    await until(lambda: finished, timeout=20)
    assert fake.requests[-1]["model"] == "another-model"


async def test_quit_lets_a_running_turn_finish_saving(model_config: dict[str, Any], memory_keyring: object,
                                                      fake: FakeOpenAI, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shell = _new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(shell.run())
    await until(lambda: shell.core is not None and shell.core.running, timeout=60)
    fake.add({"content": "Saved just in time.", "delay": 0.6})
    shell.bridge.send("desktop:late", "one more thing")
    await until(lambda: shell.tray.state is TrayState.WORKING, timeout=30)
    shell.quit()  # Quit while the model is still answering
    assert await asyncio.wait_for(task, 30) == 0
    saved = (home().sessions_dir / "desktop%3Alate.jsonl").read_text()
    assert [json.loads(line).get("content") for line in saved.splitlines()][-1] == "Saved just in time."
    for widget in QApplication.topLevelWidgets():
        widget.close()


async def test_quit_in_the_tray_menu_asks_about_unsaved_memory_edits_first(  # type: ignore[no-untyped-def]
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        qtbot) -> None:
    """Quit with a memory file's edits unsaved in its window: the window asks Save, Discard or Cancel and the app
    stays (it used to quit and drop them); once answered, Quit quits."""
    shell, task = await _started(tmp_path, monkeypatch)
    _tray_entry(shell, "Memory && history").trigger()
    window = await _memory_edited_unsaved(shell, qtbot)
    shell.tray.quit_requested.emit()
    await asyncio.sleep(0.5)  # a quit takes well under this to end the run
    asked = [box for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert not task.done() and window.isVisible() and len(asked) == 1 and "MEMORY.md" in asked[0].text()
    asked[0].button(QMessageBox.StandardButton.Discard).click()
    shell.tray.quit_requested.emit()
    assert await asyncio.wait_for(task, 30) == 0
    for widget in QApplication.topLevelWidgets():
        widget.close()


async def test_closing_the_chat_without_a_tray_asks_about_unsaved_memory_edits_first(  # type: ignore[no-untyped-def]
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        qtbot) -> None:
    """No tray (a desktop without one): closing the chat window quits the app, and it did so at once, dropping a
    memory file's edits unsaved in the memory window. It now quits as the tray's Quit does: that window asks
    first and the app stays, its chat too (the app's one window then); once answered, closing the chat quits."""
    shell, task = await _started(tmp_path, monkeypatch)
    for box in _visible_boxes():  # the one-time "No system tray" explanation
        box.close()
    shell.open_window("memory")
    window = await _memory_edited_unsaved(shell, qtbot)
    chat = shell.window("chat")
    assert chat is not None
    chat.close()
    await asyncio.sleep(0.5)  # a quit takes well under this to end the run
    asked = [box for box in window.findChildren(QMessageBox) if box.isVisible()]
    assert not task.done() and window.isVisible() and len(asked) == 1 and "MEMORY.md" in asked[0].text()
    assert chat.isVisible()  # with no tray, the one way back to the app once the question is answered
    asked[0].button(QMessageBox.StandardButton.Discard).click()
    chat.close()
    assert await asyncio.wait_for(task, 30) == 0
    for widget in QApplication.topLevelWidgets():
        widget.close()


async def test_windows_that_point_at_a_chat_open_it(shell: Shell) -> None:
    chat = shell.window("chat")
    assert chat is not None
    assert chat.findChild(TasksPanel) is not None  # the features' strips are in the chat the app builds
    chat.hide()
    _tray_entry(shell, "Memory && history").trigger()  # → Sessions tab → "Open in chat"
    shell.window("memory").open_session.emit("desktop:from-memory")  # type: ignore[union-attr]
    assert chat.isVisible() and chat.current_key == "desktop:from-memory"  # type: ignore[attr-defined]
    chat.hide()
    shell.window("quick").open_in_chat.emit("quick:default", "", [])  # type: ignore[union-attr]
    assert chat.isVisible() and chat.current_key == "quick:default"  # type: ignore[attr-defined]


async def test_ctrl_enter_in_the_quick_prompt_takes_the_question_to_the_chat(shell: Shell) -> None:
    chat = shell.window("chat")
    quick = shell.window("quick")
    assert chat is not None and quick is not None
    chat.hide()
    shell.open_quick("what is the tallest tree?")
    QTest.keyClick(quick.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # type: ignore[attr-defined]
    key = quick.session_key  # type: ignore[attr-defined]
    assert chat.isVisible() and chat.current_key == key  # type: ignore[attr-defined]
    model = chat.models[key]  # type: ignore[attr-defined]
    await until(lambda: not model.busy and [r.kind for r in model.rows] == [Kind.USER, Kind.ASSISTANT],
                message="question, then its answer")
    assert model.rows[0].text == "what is the tallest tree?"


async def test_ctrl_enter_in_the_quick_prompt_takes_its_attached_files_to_the_chat_too(
        shell: Shell, tmp_path: Path) -> None:
    """A file attached in the quick prompt goes with its question into the chat, not left behind (or lost)."""
    notes = tmp_path / "notes.txt"
    notes.write_text("The tallest tree is Hyperion.\n")
    chat = shell.window("chat")
    quick = shell.window("quick")
    assert chat is not None and quick is not None
    chat.hide()
    shell.open_quick("what do my notes say?")
    quick.shelf.add_file(str(notes))  # type: ignore[attr-defined]
    QTest.keyClick(quick.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)  # type: ignore[attr-defined]
    key = quick.session_key  # type: ignore[attr-defined]
    model = chat.models[key]  # type: ignore[attr-defined]
    await until(lambda: not model.busy and [r.kind for r in model.rows] == [Kind.USER, Kind.ASSISTANT],
                message="question, then its answer")
    assert model.rows[0].text == "what do my notes say?" and len(model.rows[0].media) == 1
    assert quick.shelf.empty  # type: ignore[attr-defined]


async def test_open_settings_in_the_quick_prompt_opens_the_settings_window(shell: Shell) -> None:
    quick = shell.window("quick")
    assert quick is not None
    shell.open_quick("")
    quick.settings_button.click()  # type: ignore[attr-defined]
    settings = shell.window("settings")
    assert settings is not None and settings.isVisible() and not quick.isVisible()


async def test_quit_during_start_up_exits_cleanly(model_config: dict[str, Any], memory_keyring: object,
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shell = _new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(shell.run())
    await asyncio.sleep(0)
    shell.quit()  # before the core is even built
    assert await asyncio.wait_for(task, 30) == 0
    assert not shell.tray.icon.isVisible()


async def test_a_memory_notification_opens_the_viewer_on_its_change(shell: Shell) -> None:
    ws = shell.core.workspace
    await shell.core.get(Memory).git.ensure()  # the baseline commit
    (ws / "USER.md").write_text("# About the user\n\n- Name: Ada\n")
    rev = await shell.core.get(Memory).git.commit(["USER.md"], "Dream: update USER.md")
    assert rev
    shell.notifier.activated.emit(OpenMemoryChange(rev))
    memory = shell.window("memory")
    assert memory is not None and memory.isVisible()
    assert memory.tabs.currentWidget() is memory.changes  # type: ignore[attr-defined]


async def test_commands_ask_on_a_card_in_the_chat_or_by_a_notification_when_it_is_hidden(
        shell: Shell, fake: FakeOpenAI) -> None:
    """With the workspace restriction off (no sandbox), exec asks: on the chat's card while the chat is on
    screen, by a notification with Allow / Deny when it is hidden."""
    await shell.core.settings.update(lambda config: setattr(config.tools, "restrict_to_workspace", False))  # type: ignore[union-attr]
    notes: list[Notice] = []
    original = shell.notifier.notify
    shell.notifier.notify = lambda note: (notes.append(note), original(note))[1]  # type: ignore[method-assign]
    chat = shell.window("chat")
    assert chat is not None
    shell.show_chat("desktop:asks")
    done: list[TurnFinished] = []
    shell.bridge.event.connect(lambda e: done.append(e) if isinstance(e, TurnFinished) else None)
    workspace = shell.core.workspace  # type: ignore[union-attr]
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "touch seen.txt"}}]}, {"content": "ran"})
    chat.send("make it", [])  # type: ignore[attr-defined]
    await until(lambda: cards_of(chat).cards, timeout=60)  # type: ignore[attr-defined]
    cards_of(chat).cards[0].allow.click()  # type: ignore[attr-defined]
    await until(lambda: done, timeout=60)
    assert (workspace / "seen.txt").exists() and not notes

    chat.hide()
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "touch unseen.txt"}}]}, {"content": "no"})
    shell.bridge.send("desktop:asks", "and another")
    await until(lambda: notes, timeout=60)
    note = notes[0]
    assert note.title == "“make it” — allow exec?" and note.body.startswith("touch unseen.txt")
    assert note.target == OpenChat("desktop:asks") and [key for key, _ in note.actions] == ["allow", "deny"]
    assert note.on_action is not None
    note.on_action("deny")  # the notification's Deny button
    await until(lambda: len(done) == 2, timeout=60)
    assert not (workspace / "unseen.txt").exists() and "did not approve" in fake.requests[-1]["messages"][-1]["content"]
    # The reply's notification follows the turn's end: it points at the answer once the chat is loaded.
    await until(lambda: len(notes) == 2, timeout=10, message="the reply that finished out of sight, announced")
    reply = notes[1]
    assert reply.body == "no" and isinstance(reply.target, OpenChat) and reply.target.session_key == "desktop:asks"


async def test_the_tray_lists_the_recent_chats_and_opens_one(shell: Shell, fake: FakeOpenAI) -> None:
    recent = shell.tray.recent_menu
    chat = shell.window("chat")
    assert chat is not None
    chat.hide()
    fake.add({"content": "Lisbon in May, then."})
    shell.bridge.send("desktop:trip", "plan a trip to Lisbon")
    await until(lambda: any("Lisbon" in a.text() for a in recent.actions()), timeout=30,
                message="the chat listed once its turn ended")
    await shell.bridge.update_chat("desktop:trip", title="Trip to Lisbon")
    shell.tray.menu.aboutToShow.emit()  # the person opens the menu: it is read again
    await until(lambda: [a.text() for a in recent.actions()][:1] == ["Trip to Lisbon"], message="the new title")
    assert len(recent.actions()) <= 5
    recent.grab().save("/tmp/tray-recent.png")
    recent.actions()[0].trigger()
    assert chat.isVisible() and chat.current_key == "desktop:trip"  # type: ignore[attr-defined]


async def test_a_recent_chat_whose_title_holds_a_tab_is_listed_whole(shell: Shell, fake: FakeOpenAI) -> None:
    """A first message pasted from a spreadsheet names its chat with a tab in it; in a menu, Qt shows what follows
    a tab as a shortcut key, apart from the rest of the title."""
    recent = shell.tray.recent_menu
    fake.add({"content": "Noted."})
    shell.bridge.send("desktop:sheet", "Budget\tQ3 numbers")
    await until(lambda: any(a.text().startswith("Budget") for a in recent.actions()), timeout=30,
                message="the chat listed once its turn ended")
    assert [a.text() for a in recent.actions() if a.text().startswith("Budget")] == ["Budget Q3 numbers"]

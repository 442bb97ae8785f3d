"""The app shell in process (offscreen, so there is no tray host): start-up, background replies,
Do not disturb, requests from later launches, settings edits, missing windows and Quit."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox

from desktop import notify
from desktop.bus import TurnFinished
from desktop.paths import home
from desktop.shell_state import load_state, state_path
from desktop.ui import app as app_module
from desktop.ui.app import Shell
from desktop.ui.chat.model import Kind
from desktop.ui.icons import TrayState
from desktop.ui.single_instance import InstanceServer, server_name
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until


def _new_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shell:
    """A shell with no display, hotkey grab or session bus of the developer's desktop."""
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS"):
        monkeypatch.delenv(var, raising=False)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    return Shell(app, home(), InstanceServer(server_name(home())), {"action": "show"}, time.perf_counter())


@pytest.fixture
async def shell(model_config: dict[str, Any], memory_keyring: object, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Shell]:
    made = _new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(made.run())
    await until(lambda: made.core is not None and made.core.running, timeout=60, message="the shell to finish starting")
    yield made
    made.quit()
    assert await asyncio.wait_for(task, 30) == 0
    for widget in QApplication.topLevelWidgets():
        widget.close()


def _visible_boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def _record_notifications(shell: Shell) -> list[tuple[str, str, notify.Target | None]]:
    sent: list[tuple[str, str, notify.Target | None]] = []
    original = shell.notifier.notify

    def record(note: notify.Notification) -> bool:
        sent.append((note.title, note.body, note.target))
        return original(note)

    shell.notifier.notify = record  # type: ignore[method-assign]
    return sent


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
    await until(lambda: done, timeout=30)
    assert sent == [("do the long job", "The long job is finished.", notify.chat("desktop:background"))]
    assert shell.tray.state is TrayState.ATTENTION
    shell.show_chat("desktop:background")  # what clicking the notification does
    assert chat.isVisible() and shell.tray.state is TrayState.IDLE

    fake.add({"content": "Seen as it happens."})  # with the chat on screen: no notification
    shell.bridge.send("desktop:background", "and now?")
    await until(lambda: len(done) == 2, timeout=30)
    assert len(sent) == 1 and shell.tray.state is TrayState.IDLE


async def test_a_failed_turn_out_of_sight_is_announced_too(shell: Shell, fake: FakeOpenAI) -> None:
    sent = _record_notifications(shell)
    shell.window("chat").hide()  # type: ignore[union-attr]
    fake.add({"status": 400, "body": {"error": {"message": "model does not exist"}}})
    shell.bridge.send("desktop:broken", "hello?")
    await until(lambda: sent, timeout=30)
    assert sent[0][0] == "hello?: reply failed" and sent[0][2] == notify.chat("desktop:broken")
    assert "model does not exist" in sent[0][1]


async def test_do_not_disturb_silences_and_is_remembered(shell: Shell) -> None:
    sent = _record_notifications(shell)
    shell.tray.dnd_action.trigger()
    await until(lambda: load_state(state_path(shell.home)).do_not_disturb)
    notify.notify("Reminder", "stretch", notify.chat("desktop:x"))  # what a background feature calls
    assert sent == [("Reminder", "stretch", notify.chat("desktop:x"))]
    assert not shell._notifications_allowed()
    assert shell.tray.state is TrayState.ATTENTION  # the icon still says something is waiting


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
    monkeypatch.setitem(app_module.WINDOWS, "memory", ("desktop.ui.no_such_window", "MemoryWindow"))
    with caplog.at_level(logging.ERROR):
        shell.tray.memory.emit()
    assert "the memory window (desktop.ui.no_such_window.MemoryWindow) is not available" in caplog.text
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


async def test_windows_that_point_at_a_chat_open_it(shell: Shell) -> None:
    chat = shell.window("chat")
    assert chat is not None
    chat.hide()
    shell.tray.memory.emit()  # Memory & history → Sessions tab → "Open in chat"
    shell.window("memory").open_session.emit("desktop:from-memory")  # type: ignore[union-attr]
    assert chat.isVisible() and chat.current_key == "desktop:from-memory"  # type: ignore[attr-defined]
    chat.hide()
    shell.window("quick").open_in_chat.emit("quick:default", "")  # type: ignore[union-attr]
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
    await shell.core.memory.git.ensure()  # the baseline commit
    (ws / "USER.md").write_text("# About the user\n\n- Name: Ada\n")
    rev = await shell.core.memory.git.commit(["USER.md"], "Dream: update USER.md")
    assert rev
    shell.notifier.activated.emit(notify.memory_change(rev))
    memory = shell.window("memory")
    assert memory is not None and memory.isVisible()
    assert memory.tabs.currentWidget() is memory.changes  # type: ignore[attr-defined]


async def test_commands_ask_on_a_card_in_the_chat_or_by_a_notification_when_it_is_hidden(
        shell: Shell, fake: FakeOpenAI) -> None:
    """With the workspace restriction off (no sandbox), exec asks: on the chat's card while the chat is on
    screen, by a notification with Allow / Deny when it is hidden."""
    await shell.core.settings.update(lambda config: setattr(config.tools, "restrict_to_workspace", False))  # type: ignore[union-attr]
    notes: list[notify.Notification] = []
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
    await until(lambda: chat.approvals.cards, timeout=60)  # type: ignore[attr-defined]
    chat.approvals.cards[0].allow.click()  # type: ignore[attr-defined]
    await until(lambda: done, timeout=60)
    assert (workspace / "seen.txt").exists() and not notes

    chat.hide()
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "touch unseen.txt"}}]}, {"content": "no"})
    shell.bridge.send("desktop:asks", "and another")
    await until(lambda: notes, timeout=60)
    note = notes[0]
    assert note.title == "make it: allow exec?" and note.body.startswith("touch unseen.txt")
    assert note.target == notify.chat("desktop:asks") and [key for key, _ in note.actions] == ["allow", "deny"]
    assert note.on_action is not None
    note.on_action("deny")  # the notification's Deny button
    await until(lambda: len(done) == 2, timeout=60)
    assert not (workspace / "unseen.txt").exists() and "did not approve" in fake.requests[-1]["messages"][-1]["content"]
    assert len(notes) == 2  # the question, then the reply that finished out of sight

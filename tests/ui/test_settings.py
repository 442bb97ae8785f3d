"""Settings as a user drives it: values saved to config.yaml and the keyring, in effect without a restart,
a connection test that says what is wrong, and a broken config.yaml only replaced on request."""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import pytest
import yaml
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QScrollBar,
    QSpinBox,
    QWidget,
)
from pytestqt.qtbot import QtBot

from desktop.config import lookup
from desktop.core import Core
from desktop.kernel import taskset
from desktop.mcp.settings import McpConfig
from desktop.providers.helper import model_helper
from desktop.providers.model_thread import run_on_model_thread
from desktop.scheduler import Scheduler
from desktop.tools import Tools
from desktop.tools.limits import Limits
from desktop.ui.bridge import CoreBridge
from desktop.ui.model_form import CHECKING_NAME
from desktop.ui.setting_rows import SettingsGroup
from desktop.ui.settings import SettingsWindow
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring
from tests.pipes import watched_pipe
from tests.ui.conftest import new_shell, until, wheel

SECRET = "sk-test-0123456789abcdef"


async def opened(qtbot: QtBot, bridge: CoreBridge) -> SettingsWindow:
    window = SettingsWindow(bridge, tools=bridge.core.get(Tools))
    added(qtbot, window)
    window.show()
    form = window.model_form
    await until(lambda: form.provider.count() > 20 and "keyring" in form.keyring_note.text(),
                message="model list and keyring state loaded")
    return window


async def save(window: SettingsWindow) -> str:
    window.status.clear()
    window.save_button.click()
    await until(lambda: window.status.text() not in ("", CHECKING_NAME), message="save finished")
    return window.status.text()


def message_box(window: SettingsWindow) -> QMessageBox | None:
    """The question `window` shows now, if any."""
    return next((w for w in window.findChildren(QMessageBox) if w.isVisible()), None)


def added(qtbot: QtBot, window: SettingsWindow) -> None:
    """Closed at the test's end as the app closes it when it quits: hidden, changes or not (closed, a window
    with changes would ask, and its question would outlive the test)."""
    qtbot.addWidget(window, before_close_func=lambda w: w.hide())


def visible_texts(window: SettingsWindow) -> str:
    return "\n".join([w.text() for w in window.findChildren(QLineEdit)]
                     + [w.text() for w in window.findChildren(QLabel)])


async def test_save_writes_config_and_keyring_and_applies_at_once(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, memory_keyring: MemoryKeyring, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    core = bridge.core
    shared_config = core.config
    window = await opened(qtbot, bridge)
    form = window.model_form
    assert form.provider.currentText() == "openai" and form.model.currentText() == "test"
    form.provider.setCurrentText("openrouter")
    form.model.setCurrentText("some/model")
    qtbot.keyClicks(form.key, SECRET)
    window.tabs.setCurrentIndex(3)
    new_workspace = tmp_path / "elsewhere"
    window.workspace.setText(str(new_workspace))
    window.hotkey.setKeySequence(QKeySequence("Ctrl+Shift+K"))
    window.rows["schedules.dream_interval"].widget.setValue(45)
    heartbeat = window.rows["schedules.heartbeat_interval"].widget
    assert heartbeat.value() == 30 and heartbeat.text() == "30 min"  # the file holds seconds, the row minutes
    heartbeat.setValue(0)
    assert heartbeat.text() == "Off"
    allowed = window.rows["schedules.heartbeat_allow"].widget
    assert allowed.text() == ""
    allowed.setText(" exec,  read_file ,")  # what the heartbeat may use without asking, one line
    window.rows["notifications"].widget.setChecked(False)

    assert "Saved" in await save(window)
    on_disk = yaml.safe_load(core.settings.path.read_text(encoding="utf-8"))
    assert on_disk["model"] == "openrouter/some/model" and on_disk["api_base"] == fake.base_url
    assert on_disk["workspace"] == str(new_workspace) and on_disk["hotkey"] == "Ctrl+Shift+K"
    assert on_disk["schedules"]["dream_interval"] == 45 * 60 and on_disk["notifications"] is False
    assert on_disk["schedules"]["heartbeat_interval"] == 0 and heartbeat_off(core)
    assert on_disk["schedules"]["heartbeat_allow"] == ["exec", "read_file"]
    assert memory_keyring.store[("nanobot-tray", "openrouter")] == SECRET
    assert SECRET not in core.settings.path.read_text(encoding="utf-8")
    # in effect without a restart: the same Config object every part holds has the new values
    assert core.config is shared_config and core.loop.config.model == "openrouter/some/model"
    assert core.workspace == new_workspace.resolve() and (new_workspace / "memory").is_dir()
    # the key is never shown back, and never logged
    assert form.key.text() == "" and "stored" in form.key.placeholderText()
    window.hide()
    window.show()
    await until(lambda: form.model.currentText() == "some/model")
    assert SECRET not in visible_texts(window) and SECRET not in caplog.text


def heartbeat_off(core: Core) -> bool:
    return next(e for e in core.get(Scheduler).entries if e.name == "heartbeat").next_run() is None


async def test_new_workspace_is_where_the_tools_write(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                      tmp_path: Path) -> None:
    window = await opened(qtbot, bridge)
    window.workspace.setText(str(tmp_path / "ws2"))
    assert "Saved" in await save(window)
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "hi"}}]},
             {"content": "Written."})
    finished: list[object] = []
    bridge.event.connect(lambda e: finished.append(e) if type(e).__name__ == "TurnFinished" else None)
    bridge.send("desktop:ws", "write a note")
    await until(lambda: finished, timeout=20)
    assert (tmp_path / "ws2" / "note.txt").read_text() == "hi"


async def test_the_home_folder_is_refused_as_the_workspace_with_why_and_gets_no_templates(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """Commands run there could write what the shell and the desktop run at login (tests/workspace/
    test_placement.py); the folder stays as it was, config.yaml too, and the workspace in force stays."""
    user, before = Path.home(), bridge.workspace
    user.mkdir(parents=True, exist_ok=True)
    saved = bridge.core.settings.path.read_text(encoding="utf-8")
    window = await opened(qtbot, bridge)
    window.workspace.setText("~")
    status = await save(window)
    assert status.startswith(f"Not saved: key 'workspace' should be a folder other than your home folder {user} "
                             "or one holding it (commands the assistant runs could then change what your shell "
                             "and desktop run when you log in)"), status
    assert list(user.iterdir()) == [] and bridge.core.settings.path.read_text(encoding="utf-8") == saved
    assert bridge.workspace == before


async def test_connection_test_succeeds_against_the_server_and_names_a_dead_port(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    window = await opened(qtbot, bridge)
    form = window.model_form
    form.test_button.click()
    await until(form.test_button.isEnabled, timeout=30, message="test finished")
    assert form.test_result.text().startswith("✓ Connected: openai/test answered")
    assert fake.requests[-1]["max_tokens"] == 1
    form.api_base.setText("http://127.0.0.1:9/v1")  # the discard port: nothing listens there
    form.test_button.click()
    await until(form.test_button.isEnabled, timeout=30, message="test finished")
    assert form.test_result.text() == "✗ Can't reach the model server at http://127.0.0.1:9 — is it running?"
    assert yaml.safe_load(bridge.core.settings.path.read_text())["api_base"] == fake.base_url  # testing saves nothing


async def test_a_model_servers_refusal_that_spells_markup_shows_under_the_test_as_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    """The note under Test connection quotes what the model server said when it refused: words spelling
    <img src="/a/pipe"> were read as markup there, and Qt read the file they named as the note was shown (a named
    pipe froze the app for good). The note shows the words."""
    window = await opened(qtbot, bridge)
    form = window.model_form
    pipe = tmp_path / "pipe"
    said = [f'no such route: <img src="{pipe}">', f"no such route: <IMG SRC='{pipe}'>"]
    notes = []
    with watched_pipe(pipe) as reads:
        for words in said:
            fake.add({"status": 400, "body": {"error": {"message": words, "type": "invalid_request_error"}}})
            form.test_button.click()
            await until(form.test_button.isEnabled, timeout=30, message="test finished")
            window.grab()  # laid out and painted, as on screen
            notes.append(form.test_result.text())
        form.test_result.clear()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    for words, note in zip(said, notes, strict=True):
        assert note.startswith("✗ The model request failed") and words in note, note
    assert reads == [], "the note read the pipe the server's words named"


async def test_the_connection_tests_note_moves_nothing(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                       tmp_path: Path) -> None:
    """However long its result (here a served model's name with no place to break it), the button and the
    window stay where they were: the note wraps in the room it has."""
    window = await opened(qtbot, bridge)
    form = window.model_form
    served = "meta_llama_3_1_70b_instruct_awq_int4_gptq_marlin_calibrated_on_our_own_support_tickets_v2"
    form.model.setCurrentText(served)
    await asyncio.sleep(0.1)  # laid out as the person sees it before clicking
    size, place = window.size(), form.test_button.mapTo(window, QPoint(0, 0))
    form.test_button.click()
    await until(form.test_button.isEnabled, timeout=30, message="test finished")
    assert form.test_result.text().startswith(f"✓ Connected: openai/{served} answered")
    await asyncio.sleep(0.1)
    window.grab().save(str(tmp_path / "settings-test-connection.png"))
    assert window.size() == size and form.test_button.mapTo(window, QPoint(0, 0)) == place


async def test_broken_config_is_only_replaced_after_confirmation(qtbot: QtBot, bridge: CoreBridge) -> None:
    path = bridge.core.settings.path
    broken = path.read_text(encoding="utf-8") + "temperature: warm\nmax_tokens: lots\n"
    path.write_text(broken, encoding="utf-8")
    window = await opened(qtbot, bridge)
    assert window.banner.isVisible() and "temperature" in window.banner.text()

    window.save_button.click()
    await until(lambda: message_box(window), message="asked before replacing")
    box = message_box(window)
    assert box is not None and box.text().startswith("config.yaml has problems, so some of your settings could not "
                                                     "be read")
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: "Not saved" in window.status.text())
    assert path.read_text(encoding="utf-8") == broken

    window.save_button.click()
    await until(lambda: message_box(window))
    box = message_box(window)
    assert box is not None
    next(b for b in box.findChildren(QPushButton) if b.text() == "Save and keep a copy").click()
    await until(lambda: "Saved" in window.status.text())
    kept = list(path.parent.glob("config.yaml.broken-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == broken
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["temperature"] == 0.1
    assert not window.banner.isVisible() and bridge.core.settings.problems == []


async def test_an_unreadable_config_shows_the_settings_in_force_names_the_line_and_never_saves_defaults(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    settings = bridge.core.settings
    path = settings.path
    working = yaml.safe_load(path.read_text(encoding="utf-8"))
    working["mcp"] = {"servers": {"notes": {"command": "notes-server", "enabled": False}}}
    working["approvals"] = {"rules": [{"tool": "exec", "what": "make test", "workspace": "/w"}]}
    path.write_text(yaml.safe_dump(working), encoding="utf-8")
    await settings.reload()
    assert "notes" in bridge.core.config.section(McpConfig).servers
    broken = path.read_text(encoding="utf-8").replace("model: openai/test", "model: [openai/test")
    path.write_text(broken, encoding="utf-8")
    await settings.reload()  # as the app's file watcher does
    assert bridge.core.config.model == "openai/test"  # the working setup stays in force
    assert "using defaults" not in settings.problems[0] and "settings in force stay" in settings.problems[0]

    window = await opened(qtbot, bridge)
    line = broken.splitlines().index("model: [openai/test") + 1
    await until(lambda: window.banner.isVisible(), message="the problem is shown")
    banner = window.banner.text()
    assert f"line {line}" in banner and "[openai/test" in banner and "settings shown here" in banner
    form = window.model_form
    assert form.model_name() == "openai/test" and form.api_base.text() == fake.base_url  # not a blank form
    assert "this provider" not in form.key.placeholderText()

    window.save_button.click()
    await until(lambda: message_box(window), message="asked before replacing")
    box = message_box(window)
    assert box is not None and f"line {line}" in box.text()
    assert box.text().startswith("config.yaml could not be read at all, so none of your settings in it could be used")
    box.grab().save(str(tmp_path / "replace-unreadable.png"))
    next(b for b in box.findChildren(QPushButton) if b.text() == "Save and keep a copy").click()
    await until(lambda: "Saved" in window.status.text())
    kept = list(path.parent.glob("config.yaml.broken-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == broken  # the person's text is never lost
    saved = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert saved["model"] == "openai/test" and saved["api_base"] == fake.base_url
    assert saved["mcp"]["servers"]["notes"]["command"] == "notes-server"
    assert saved["approvals"]["rules"][0]["what"] == "make test"


async def test_a_key_no_keyring_takes_saves_nothing_and_the_model_in_force_stays(qtbot: QtBot,
                                                                                  bridge: CoreBridge) -> None:
    """Save wrote config.yaml before storing the key: with no keyring, the app switched to the new provider's model
    with its key missing, and every chat failed until the keyring was fixed. The key now goes first, as on the first
    run: nothing is saved, the model in force keeps answering, the cursor is in the key field, and the status says
    how to save the rest without the key."""
    keyring.set_keyring(keyring.backends.fail.Keyring())  # the memory_keyring fixture restores the previous one
    window = SettingsWindow(bridge)
    added(qtbot, window)
    window.show()
    form = window.model_form
    await until(lambda: "not usable" in form.keyring_note.text())
    assert "GNOME Keyring" in form.keyring_note.text()
    before = bridge.core.settings.path.read_text(encoding="utf-8")
    form.provider.setCurrentText("anthropic")
    form.model.setCurrentText("claude-3-5-haiku-latest")  # another provider: a model of its own
    qtbot.keyClicks(form.key, SECRET)
    window.tabs.setCurrentIndex(1)
    status = await save(window)
    assert status.startswith("Nothing was saved. The key was not stored: no keyring is installed.")
    assert "GNOME Keyring" in status and status.endswith("clear the API key field.")
    assert form.key.text() == SECRET  # not lost: the user can fix the keyring and save again
    assert bridge.core.config.model == "openai/test" and bridge.core.settings.path.read_text(encoding="utf-8") == before
    assert window.focusWidget() is form.key
    form.key.clear()
    assert "Saved" in await save(window)
    assert bridge.core.config.model == "anthropic/claude-3-5-haiku-latest"


async def test_plaintext_keyring_is_flagged(qtbot: QtBot, bridge: CoreBridge) -> None:
    class PlaintextKeyring(MemoryKeyring):
        """Named like keyrings.alt's file backend, which keeps keys readable on disk."""

    keyring.set_keyring(PlaintextKeyring())
    window = SettingsWindow(bridge)
    added(qtbot, window)
    window.show()
    await until(lambda: "plain file" in window.model_form.keyring_note.text())
    assert window.model_form.keyring_note.text().startswith("⚠")



async def test_start_at_login_writes_and_removes_the_autostart_entry(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    entry = tmp_path / "xdg" / "autostart" / "nanobot-tray.desktop"
    window = await opened(qtbot, bridge)
    await until(window.autostart.isEnabled)
    assert not window.autostart.isChecked()
    window.autostart.setChecked(True)
    assert "Saved" in await save(window)
    assert entry.is_file() and "Exec=" in entry.read_text()
    window.autostart.setChecked(False)
    assert "Saved" in await save(window)
    assert not entry.exists()


async def test_the_tools_page_says_how_commands_are_contained(qtbot: QtBot, bridge: CoreBridge) -> None:
    window = await opened(qtbot, bridge)
    await until(lambda: window.command_mode.text(), message="the command mode shown")
    assert window.command_mode.text().startswith("Sandboxed with bubblewrap: the workspace is writable")
    config = copy.deepcopy(bridge.core.config)
    config.tools.restrict_to_workspace = False
    await bridge.save_settings(config)
    await window.reload()
    assert window.command_mode.text().startswith("Not sandboxed: tools.restrict_to_workspace is off")
    assert window.network_mode.text().startswith("Warning: not enforced: commands are not sandboxed")


async def test_the_tools_page_chooses_the_network_for_commands_and_warns_about_sharing_this_computers(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    window = await opened(qtbot, bridge)
    await until(lambda: window.network_mode.text(), message="the network in force shown")
    network = window.rows["tools.exec.network"].widget
    assert network.currentData() == "internet" and network.currentText() == "Public internet only"
    assert window.network_mode.text().startswith("In force: internet (tools.exec.network: internet): public "
                                                 "internet addresses only")
    network.setCurrentIndex(network.findData("host"))
    window.save_button.click()  # asks first, naming what commands could reach
    await until(lambda: message_box(window), message="asked before sharing this computer's network")
    box = message_box(window)
    assert box is not None and box.windowTitle() == "Give commands this computer's network?"
    assert all(part in box.text() for part in ("services running on this computer", "local network",
                                               "X server", "D-Bus"))
    box.grab().save(str(tmp_path / "settings-host-network.png"))
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: "Not saved" in window.status.text(), message="cancelled")
    assert network.currentData() == "internet" and "Public internet only" in window.status.text()
    assert "host" not in bridge.core.settings.path.read_text() and bridge.core.config.tools.exec.network == "internet"

    network.setCurrentIndex(network.findData("host"))
    window.status.clear()
    window.save_button.click()
    await until(lambda: message_box(window), message="asked again")
    box = message_box(window)
    assert box is not None
    next(b for b in box.findChildren(QPushButton) if b.text() == "Use this computer's network").click()
    await until(lambda: "Saved" in window.status.text(), message="saved once agreed")
    assert bridge.core.config.tools.exec.network == "host"
    assert yaml.safe_load(bridge.core.settings.path.read_text())["tools"]["exec"]["network"] == "host"
    assert window.network_mode.text().startswith("Warning: shared with this computer (tools.exec.network: host)")
    network.setCurrentIndex(network.findData("off"))
    assert "Saved" in await save(window)
    assert window.network_mode.text() == "In force: off (tools.exec.network: off): commands have no network."
    assert yaml.safe_load(bridge.core.settings.path.read_text())["tools"]["exec"]["network"] == "off"


def items(form_model: object) -> list[str]:
    combo = form_model  # a QComboBox
    return [combo.itemText(i) for i in range(combo.count()) if combo.itemText(i)]  # type: ignore[attr-defined]


async def test_the_server_lists_its_own_models_and_a_dead_one_says_so(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.models = ["qwen3:8b", "llama3.1"]
    window = await opened(qtbot, bridge)
    form = window.model_form
    await until(lambda: "2 models on this server" in form.api_base_note.text(), message="server models listed")
    assert items(form.model) == ["llama3.1", "qwen3:8b"]
    fake.models = ["qwen3:8b"]
    form.api_base.setText(form.api_base.text() + "/")
    await until(lambda: "1 model on this server." in form.api_base_note.text(), message="one model, singular")
    form.api_base.setText("http://127.0.0.1:9/v1")
    await until(lambda: "Nothing answers at http://127.0.0.1:9/v1" in form.api_base_note.text(),
                message="dead server named")
    assert "ft:gpt-4o-2024-08-06" not in items(form.model)  # back to the catalogue for the provider
    assert items(form.model)[0] == "chat-latest" and "gpt-4o" in items(form.model)
    window.grab().save(str(tmp_path / "settings-model.png"))


async def test_a_malformed_server_address_is_not_saved(qtbot: QtBot, bridge: CoreBridge) -> None:
    path = bridge.core.settings.path
    before = path.read_text(encoding="utf-8")
    window = await opened(qtbot, bridge)
    window.model_form.api_base.setText("127.0.0.1:1234/v1")
    await until(lambda: "must start with http://" in window.model_form.api_base_note.text())
    assert "must start with http:// or https://" in await save(window)
    assert path.read_text(encoding="utf-8") == before


async def test_the_heartbeats_allowed_tools_say_what_to_write(qtbot: QtBot, bridge: CoreBridge) -> None:
    """"Heartbeat may use without asking" was a bare line of text: nothing said it takes tool names (exec,
    web_fetch) or mcp:SERVER, so a person could only guess. Its help shows under it."""
    window = await opened(qtbot, bridge)
    assert window.show_page("General")
    field = window.rows["schedules.heartbeat_allow"].widget
    await until(field.isVisible, message="the General page shown")
    help_text = lookup("schedules.heartbeat_allow").setting.help
    shown = [label for label in window.findChildren(QLabel) if label.text() == help_text]
    assert shown and shown[0].isVisible()


async def test_heartbeat_allow_naming_no_tool_is_not_saved_and_lists_the_tools(qtbot: QtBot,
                                                                                 bridge: CoreBridge) -> None:
    """"exce" in what the heartbeat may use without asking was saved, and the heartbeat's exec calls then still
    failed for want of a grant. Save now names the unknown ones and the tools there are; the typing stays, and
    config.yaml keeps what it had."""
    window = await opened(qtbot, bridge)
    before = bridge.core.settings.path.read_text(encoding="utf-8")
    allowed = window.rows["schedules.heartbeat_allow"].widget
    allowed.setText("exce, read_file, webfetch")
    assert not await window.save()
    said = window.status.text()
    assert "there is no tool named exce, webfetch" in said and "exec" in said.split("webfetch", 1)[1]
    assert allowed.text() == "exce, read_file, webfetch"
    assert bridge.core.settings.path.read_text(encoding="utf-8") == before
    allowed.setText("exec, read_file")
    assert "Saved" in await save(window)
    on_disk = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert on_disk["schedules"]["heartbeat_allow"] == ["exec", "read_file"]


async def test_heartbeat_allow_naming_no_mcp_server_is_not_saved_and_lists_the_servers(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """"mcp:gihtub" (a typo for the github server) was saved and granted nothing, so the heartbeat's calls to the
    server still failed. Save now names it and the servers set up; a server set up is taken though it is not
    connected (switched off here): its tools are known only once it is."""
    settings = bridge.core.settings
    working = yaml.safe_load(settings.path.read_text(encoding="utf-8"))
    working["mcp"] = {"servers": {"github": {"command": "github-server", "enabled": False}}}
    settings.path.write_text(yaml.safe_dump(working), encoding="utf-8")
    await settings.reload()
    window = await opened(qtbot, bridge)
    before = settings.path.read_text(encoding="utf-8")
    allowed = window.rows["schedules.heartbeat_allow"].widget
    allowed.setText("exec, mcp:gihtub")
    assert not await window.save()
    said = window.status.text()
    assert "there is no MCP server named gihtub" in said and "github" in said.split("gihtub", 1)[1]
    assert allowed.text() == "exec, mcp:gihtub" and settings.path.read_text(encoding="utf-8") == before
    allowed.setText("exec, mcp:github")
    assert "Saved" in await save(window)
    on_disk = yaml.safe_load(settings.path.read_text(encoding="utf-8"))
    assert on_disk["schedules"]["heartbeat_allow"] == ["exec", "mcp:github"]


async def test_a_cleared_model_is_not_saved_and_the_one_in_force_stays(qtbot: QtBot, bridge: CoreBridge) -> None:
    """The model field emptied by mistake: saved, the app would have no model and every chat would fail (or go back
    to the first-run setup). Save says what to do; the model in force and config.yaml stay as they were."""
    window = await opened(qtbot, bridge)
    assert bridge.core.config.model == "openai/test"
    window.model_form.provider.setCurrentText("")
    window.model_form.model.setCurrentText("")
    said = await save(window)
    assert said == "Choose the model that answers first: pick one from the Model list, or type its name."
    assert bridge.core.config.model == "openai/test"
    assert "openai/test" in bridge.core.home.config_file.read_text(encoding="utf-8")


@pytest.mark.parametrize(("typed", "why"), [("gpt 4o", "a space"), ("gpt\u00a04o", "a space"),
                                           ("gpt-4o\nmini", "a line break")])
async def test_a_model_name_no_provider_takes_is_refused_and_stays_typed(qtbot: QtBot, bridge: CoreBridge,
                                                                       typed: str, why: str) -> None:
    """A model name with a space (a plain one, or a web page's no-break space) or a line break inside was saved, and
    the first chat then failed with the provider's obscure error. Save says what is wrong; the typing stays to fix, and
    the model in force and config.yaml stay as they were."""
    window = await opened(qtbot, bridge)
    before = bridge.core.home.config_file.read_text(encoding="utf-8")
    window.model_form.provider.setCurrentText("openai")
    window.model_form.model.setCurrentText(typed)
    said = await save(window)
    assert "model name" in said and f"has {why} in it" in said
    assert window.model_form.model.currentText() == typed
    assert bridge.core.config.model == "openai/test"
    assert bridge.core.home.config_file.read_text(encoding="utf-8") == before


async def test_a_name_with_a_space_that_the_server_lists_is_saved(qtbot: QtBot, bridge: CoreBridge,
                                                                 fake: FakeOpenAI) -> None:
    """A server of one's own may serve a model under any name (vLLM's --served-model-name): the one it lists is
    the one it answers to, space or not."""
    fake.models = ["my model"]
    window = await opened(qtbot, bridge)
    form = window.model_form
    await until(lambda: "1 model on this server" in form.api_base_note.text(), message="server models listed")
    form.model.setCurrentText("my model")
    assert "Saved" in await save(window)
    assert bridge.core.config.model == "openai/my model"


async def test_spaces_around_a_model_name_are_trimmed(qtbot: QtBot, bridge: CoreBridge) -> None:
    """A name pasted with a space or its line's end around it is the name: saved without them."""
    window = await opened(qtbot, bridge)
    window.model_form.provider.setCurrentText("openai")
    window.model_form.model.setCurrentText("  gpt-4o-mini\n")
    assert "Saved" in await save(window)
    assert bridge.core.config.model == "openai/gpt-4o-mini"


async def test_answer_and_tool_options_are_saved_and_in_effect(qtbot: QtBot, bridge: CoreBridge,
                                                              tmp_path: Path) -> None:
    core = bridge.core
    window = await opened(qtbot, bridge)
    def field(key: str) -> Any:
        return window.rows[key].widget

    restrict, timeout, search = field("tools.restrict_to_workspace"), field("tools.exec.timeout"), \
        field("tools.web.search_provider")
    limits = [field(f"tools.exec.{key}") for key in ("max_processes", "max_memory_mb", "max_file_mb")]
    assert field("temperature").value() == 0.1 and restrict.isChecked()
    assert timeout.value() == 60 and search.currentData() == "duckduckgo"
    assert [box.value() for box in limits] == [256, 2048, 1024]
    field("temperature").setValue(0.7)
    field("max_tokens").setValue(4096)
    field("context_window_tokens").setValue(32000)
    window.tabs.setCurrentIndex(1)
    window.grab().save(str(tmp_path / "settings-answers.png"))
    window.tabs.setCurrentIndex(2)
    restrict.setChecked(False)
    timeout.setValue(30)
    limits[0].setValue(128)
    limits[1].setValue(10)  # below the lowest allowed: the box holds it at 64
    search.setCurrentIndex(search.findData("brave"))
    window.grab().save(str(tmp_path / "settings-tools.png"))
    assert "Saved" in await save(window)
    saved = yaml.safe_load(core.settings.path.read_text(encoding="utf-8"))
    assert (saved["temperature"], saved["max_tokens"], saved["context_window_tokens"]) == (0.7, 4096, 32000)
    assert saved["tools"]["exec"]["timeout"] == 30 and saved["tools"]["web"] == {"search_provider": "brave"}
    assert saved["tools"]["restrict_to_workspace"] is False
    exec_tool = core.tools.get("exec")
    assert exec_tool is not None and exec_tool.timeout == 30  # type: ignore[attr-defined]
    assert (saved["tools"]["exec"]["max_processes"], saved["tools"]["exec"]["max_memory_mb"]) == (128, 64)
    assert exec_tool.limits == Limits(128, 64, 1024)  # type: ignore[attr-defined]
    field("max_tokens").setValue(40000)
    assert "shorter than the context window" in await save(window)


async def test_simple_rows_show_what_config_yaml_declares(qtbot: QtBot, bridge: CoreBridge) -> None:
    """Label, help, bounds, unit and choices of each simple row come from its declaration, so the window
    offers exactly what config.yaml accepts."""
    window = await opened(qtbot, bridge)
    labels = {label.text() for label in window.findChildren(QLabel)}
    for key in window.rows:
        meta = lookup(key).setting
        widget = window.rows[key].widget
        assert widget.toolTip() == meta.help, key
        if isinstance(widget, QCheckBox):
            assert widget.text() == meta.label
        else:
            assert meta.label in labels, key
        if isinstance(widget, QComboBox):
            assert [(widget.itemData(i), widget.itemText(i)) for i in range(widget.count())] == list(meta.choices)
    timeout = window.rows["tools.exec.timeout"].widget
    assert (timeout.minimum(), timeout.maximum(), timeout.suffix()) == (1, 600, " s")
    temperature = window.rows["temperature"].widget
    assert (temperature.minimum(), temperature.maximum(), temperature.singleStep()) == (0, 2, 0.1)
    memory = window.rows["tools.exec.max_memory_mb"].widget
    assert (memory.minimum(), memory.suffix()) == (64, " MB")
    dream = window.rows["schedules.dream_interval"].widget
    assert dream.minimum() == 0 and dream.specialValueText() == "Off" and dream.suffix() == " min"
    assert lookup("temperature").setting.help in labels  # shown under its row too


async def test_a_section_of_simple_settings_gets_its_page_of_generated_rows(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """A feature's page made only of its section's simple settings (here `provider`, whose list of retry
    delays is not simple) loads and saves with the rest of the window."""
    window = SettingsWindow(bridge, [("Connection", "How long to wait.", lambda: SettingsGroup("provider"))])
    added(qtbot, window)
    window.show()
    await until(lambda: window.model_form.provider.count() > 20, message="model list loaded")
    await window.reload()
    timeout = window.rows["provider.timeout"].widget
    assert "provider.retry_delays" not in window.rows
    assert timeout.value() == bridge.core.config.provider.timeout and timeout.suffix() == " s" and timeout.toolTip() == lookup("provider.timeout").setting.help
    timeout.setValue(45)
    assert "Saved" in await save(window)
    on_disk = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert on_disk["provider"]["timeout"] == 45 and bridge.core.config.provider.timeout == 45


async def test_the_model_list_is_asked_for_again_each_time_settings_opens(qtbot: QtBot, bridge: CoreBridge,
                                                                          fake: FakeOpenAI, tmp_path: Path) -> None:
    window = await opened(qtbot, bridge)
    form = window.model_form
    await until(lambda: form.api_base_note.text() == "1 model on this server.", message="the server's list")
    window.close()

    fake.models = ["test", "test-large"]  # the server started serving a second model
    window.show()
    await until(lambda: form.api_base_note.text() == "2 models on this server.", message="the list asked for again")
    assert [form.model.itemText(i) for i in range(form.model.count())] == ["test", "test-large"]
    assert form.model.currentText() == "test"
    window.grab().save(str(tmp_path / "settings-model-list.png"))


async def test_every_page_is_named_in_full_at_the_windows_size(model_config: dict[str, Any], memory_keyring: object,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings as the app builds it, with every feature's page: each page's name shows whole (ten of them cut
    "Desktop context" short in a row of tabs), and each opens its page."""
    shell = new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(shell.run())
    await until(lambda: shell.core is not None and shell.core.running, timeout=60)
    try:
        shell.open_window("settings")
        window = shell.window("settings")
        assert isinstance(window, SettingsWindow)
        await until(window.isVisible)
        pages = window.tabs
        names = [pages.tabText(i) for i in range(pages.count())]
        assert {"Model", "Tools", "MCP servers", "Desktop context", "General"} <= set(names), names
        listed = pages.names
        for i, name in enumerate(names):
            shown = listed.visualItemRect(listed.item(i))
            assert listed.viewport().rect().contains(shown), f"{name} is cut off: {shown}"
            assert shown.width() >= listed.fontMetrics().horizontalAdvance(name), f"{name} does not fit"
        assert window.show_page("Desktop context") and pages.pages.currentWidget().isVisible()
        window.grab().save(str(tmp_path / "settings-pages.png"))
        assert window.show_page("Tools")
        window.grab().save(str(tmp_path / "settings-tools.png"))
    finally:
        shell.quit()
        assert await asyncio.wait_for(task, 30) == 0
        for widget in QApplication.topLevelWidgets():
            widget.close()


@pytest.mark.parametrize("problems", [False, True])
async def test_every_pages_notes_show_whole_at_the_windows_size(model_config: dict[str, Any], memory_keyring: object,
                                                                home_dir: Path, tmp_path: Path, problems: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The Voice page's notes under its fields were cut off mid-line (the page squeezed them to fit the window), and
    with config.yaml's problems listed above the pages, the General page's too; a page taller than the room it has
    scrolls instead, and every note shows all its lines."""
    if problems:
        config = home_dir / "config.yaml"
        config.write_text(config.read_text(encoding="utf-8") + "surprise_setting: 1\nanother_surprise: 2\n",
                          encoding="utf-8")
    shell = new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(shell.run())
    await until(lambda: shell.core is not None and shell.core.running, timeout=60)
    try:
        shell.open_window("settings")
        window = shell.window("settings")
        assert isinstance(window, SettingsWindow)
        await until(window.isVisible)
        await until(lambda: window.banner.isVisible() == problems, message="config.yaml read")
        pages = window.tabs
        for name in [pages.tabText(i) for i in range(pages.count())]:
            assert window.show_page(name)
            page = pages.pages.currentWidget()

            def cut(page: QWidget = page) -> list[str]:
                return [label.text()[:40] for label in page.findChildren(QLabel)
                        if label.isVisible() and label.wordWrap() and label.text()
                        and label.height() < label.heightForWidth(label.width())]

            # a note that just changed (the keyring's, read as the window opens) is laid out anew a moment later
            await until(lambda: not cut(), timeout=2, message=f"{name}: notes cut off: {cut()}")
    finally:
        shell.quit()
        assert await asyncio.wait_for(task, 30) == 0
        for widget in QApplication.topLevelWidgets():
            widget.close()


@pytest.mark.parametrize(("key", "typed", "said"), [
    ("hotkeys.selection", "ctrl+alt+d", "Ask about the selection and Dictate are both Ctrl+Alt+D"),
    ("hotkeys.screen", "Ctrl+Alt+Space", "Ask about the screen and the quick prompt's hotkey are both Ctrl+Alt+Space"),
    ("hotkeys.screen", "A", "needs at least one modifier"),
    ("hotkeys.selection", "Ctrl+Alt+Banana", "Ask about the selection: there is no key named 'Banana'"),
])
async def test_a_desktop_key_that_cannot_work_is_not_saved_and_says_why(
        shell: Any, key: str, typed: str, said: str) -> None:  # type: ignore[no-untyped-def]
    """One of the app's keys typed as another of its keys was saved ("Saved. Changes are in effect."), and only a
    notification then said the key was "already used by another program"; a key with no modifier was saved too, and
    a key no keyboard has (Ctrl+Alt+Banana), which then never worked. Save now says what is wrong, the typing stays, and config.yaml keeps what it had."""
    shell.open_window("settings")
    window = shell.window("settings")
    assert isinstance(window, SettingsWindow) and window.show_page("Desktop context")
    await until(lambda: window.rows["hotkeys.dictate"].widget.text() == "Ctrl+Alt+D",  # type: ignore[union-attr]
                message="the settings loaded")
    before = shell.core.home.config_file.read_text(encoding="utf-8")
    window.rows[key].widget.setText(typed)  # type: ignore[union-attr]
    assert not await window.save()
    assert said in window.status.text()
    assert window.rows[key].widget.text() == typed  # type: ignore[union-attr]
    assert shell.core.home.config_file.read_text(encoding="utf-8") == before


def page_scroll(widget: QWidget) -> QScrollBar:
    """The scroll bar of the page `widget` is on."""
    area = widget.parentWidget()
    while not isinstance(area, QScrollArea):
        assert area is not None, "not on a scrolling page"
        area = area.parentWidget()
    return area.verticalScrollBar()


async def test_the_wheel_scrolls_the_page_over_a_field_until_it_is_clicked_into(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """The walk: one notch over "Network for commands" while scrolling the Tools page made it "No network", two
    made it "This computer's network", and Save wrote `network: host`."""
    window = await opened(qtbot, bridge)
    window.resize(660, 560)
    window.show_page("Tools")
    network, timeout = window.rows["tools.exec.network"].widget, window.rows["tools.exec.timeout"].widget
    await until(lambda: window.tool_policies.combos, message="the tools listed")
    per_tool = next(iter(window.tool_policies.combos.values()))
    scroll = page_scroll(network)
    assert scroll.maximum() > 0, "the Tools page scrolls in a window this size"
    for field in (network, timeout):
        scroll.setValue(0)
        wheel(field)
        wheel(field)
        assert scroll.value() > 0, "the page scrolled"
    table = window.tool_policies.table.verticalScrollBar()
    wheel(per_tool)
    assert table.value() > 0, "the table scrolled"  # as it would with the pointer between its rows
    assert network.currentData() == "internet" and timeout.value() == 60 and per_tool.currentData() == ""
    assert "Saved" in await save(window)
    assert yaml.safe_load(bridge.core.settings.path.read_text())["tools"]["exec"]["network"] == "internet"

    window.activateWindow()
    network.setFocus()  # clicked into: now the wheel is for it
    await until(network.hasFocus, message="the drop-down has the keyboard focus")
    wheel(network)
    assert network.currentData() == "off"


async def test_an_open_window_with_no_changes_shows_a_hand_edit_at_once(qtbot: QtBot, bridge: CoreBridge) -> None:
    settings = bridge.core.settings
    window = await opened(qtbot, bridge)
    edited = yaml.safe_load(settings.path.read_text(encoding="utf-8"))
    edited["context_window_tokens"] = 32768
    settings.path.write_text(yaml.safe_dump(edited), encoding="utf-8")
    await settings.reload()  # as the app's file watcher does
    await until(lambda: window.rows["context_window_tokens"].widget.value() == 32768, message="the form shows the file")
    assert not window.stale.isVisible() and not window.unsaved()


async def test_an_open_window_saves_only_its_own_changes_over_a_hand_edit(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """The walk: Settings open, context_window_tokens edited in the file (the app took it), Temperature changed
    in the window, Save: the file's edit was undone without a word."""
    settings = bridge.core.settings
    window = await opened(qtbot, bridge)
    window.tabs.setCurrentIndex(1)
    window.rows["temperature"].widget.setValue(0.3)
    edited = yaml.safe_load(settings.path.read_text(encoding="utf-8"))
    edited["context_window_tokens"] = 32768
    edited["tools"] = {"exec": {"timeout": 90}}
    settings.path.write_text(yaml.safe_dump(edited), encoding="utf-8")
    await settings.reload()
    await until(window.stale.isVisible, message="the window says the file changed")
    assert window.stale.text().startswith("config.yaml changed since you opened Settings")
    assert window.rows["temperature"].widget.value() == 0.3  # the person's change is kept
    window.grab().save(str(tmp_path / "settings-file-changed.png"))

    assert "Saved" in await save(window)
    saved = yaml.safe_load(settings.path.read_text(encoding="utf-8"))
    assert (saved["temperature"], saved["context_window_tokens"], saved["tools"]["exec"]["timeout"]) == (0.3, 32768, 90)
    assert bridge.core.config.context_window_tokens == 32768 and bridge.core.config.temperature == 0.3
    assert not window.stale.isVisible() and window.rows["context_window_tokens"].widget.value() == 32768
    assert not window.unsaved()


async def test_a_problem_that_appears_in_the_file_shows_in_the_open_window_at_once(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    settings = bridge.core.settings
    window = await opened(qtbot, bridge)
    window.rows["max_tokens"].widget.setValue(4096)  # a change of the person's own: the form is not shown anew
    settings.path.write_text(settings.path.read_text(encoding="utf-8") + "temperature: hot\n", encoding="utf-8")
    await settings.reload()
    await until(window.banner.isVisible, message="the problem shown")
    assert "'temperature' should be a number, got 'hot'" in window.banner.text()
    assert window.rows["max_tokens"].widget.value() == 4096


async def test_closing_with_unsaved_changes_asks_first(qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    path = bridge.core.settings.path
    before = path.read_text(encoding="utf-8")
    window = await opened(qtbot, bridge)
    window.close()
    assert not window.isVisible() and message_box(window) is None  # nothing changed: nothing to ask
    window.show()
    await until(lambda: not taskset.pending(), message="read again")
    window.tabs.setCurrentIndex(1)
    window.rows["temperature"].widget.setValue(0.5)

    window.close()
    await until(lambda: message_box(window), message="asked")
    box = message_box(window)
    assert box is not None and box.windowTitle() == "Save your changes?" and "Temperature" in box.text()
    window.grab().save(str(tmp_path / "settings-close-window.png"))
    box.grab().save(str(tmp_path / "settings-close-prompt.png"))
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: message_box(window) is None)
    assert window.isVisible() and window.rows["temperature"].widget.value() == 0.5

    window.close()
    await until(lambda: message_box(window))
    box = message_box(window)
    assert box is not None
    box.button(QMessageBox.StandardButton.Discard).click()
    await until(lambda: not window.isVisible(), message="closed without saving")
    assert path.read_text(encoding="utf-8") == before

    window.show()
    await until(lambda: window.rows["temperature"].widget.value() == 0.1, message="the file's value shown again")
    await until(lambda: not taskset.pending(), message="read again")
    window.rows["temperature"].widget.setValue(0.6)
    window.close()
    await until(lambda: message_box(window))
    box = message_box(window)
    assert box is not None
    box.button(QMessageBox.StandardButton.Save).click()
    await until(lambda: not window.isVisible(), message="saved, then closed")
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["temperature"] == 0.6


async def test_a_longest_answer_of_a_few_tokens_is_refused(qtbot: QtBot, bridge: CoreBridge) -> None:
    """The walk saved `max_tokens: 3`: the row holds such a slip at the lowest sensible value."""
    window = await opened(qtbot, bridge)
    answer, window_tokens = window.rows["max_tokens"].widget, window.rows["context_window_tokens"].widget
    answer.setValue(3)
    window_tokens.setValue(100)
    assert (answer.value(), window_tokens.value()) == (256, 4096)
    assert "Saved" in await save(window)
    saved = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert (saved["max_tokens"], saved["context_window_tokens"]) == (256, 4096)



def wrong_workspace(window: SettingsWindow) -> QWidget:
    window.workspace.setText("relative/folder")
    return window.workspace


def wrong_address(window: SettingsWindow) -> QWidget:
    window.model_form.api_base.setText("htp:/nowhere")
    return window.model_form.api_base


def wrong_tool(window: SettingsWindow) -> QWidget:
    field = window.rows["schedules.heartbeat_allow"].widget
    assert isinstance(field, QLineEdit)
    field.setText("exec, nosuchtool")
    return field


def too_long_an_answer(window: SettingsWindow) -> QWidget:
    field = window.rows["max_tokens"].widget
    assert isinstance(field, QSpinBox)
    field.setValue(window.rows["context_window_tokens"].widget.value())  # type: ignore[union-attr]
    return field


@pytest.mark.parametrize(("page", "wrong", "said"), [
    ("Model", wrong_workspace, "must be a full path"),
    ("General", wrong_address, "The server address must start with http://"),
    ("Tools", wrong_tool, "there is no tool named nosuchtool"),
    ("General", too_long_an_answer, "The longest answer must be shorter than the context window"),
])
async def test_a_refused_save_shows_the_page_with_the_bad_value_and_puts_the_cursor_in_it(
        qtbot: QtBot, bridge: CoreBridge, page: str, wrong: Callable[[SettingsWindow], QWidget], said: str) -> None:
    """Save with a wrong value on another page than the one shown said what was wrong at the bottom and stayed on
    that page: the person did not see the field it meant. Save now turns to the field's page and puts the cursor in
    it; the message stays, and nothing is saved."""
    window = await opened(qtbot, bridge)
    before = bridge.core.home.config_file.read_text(encoding="utf-8")
    field = wrong(window)
    assert window.show_page(page) and not field.isVisible()
    assert not await window.save()
    assert said in window.status.text()
    assert window.tabs.pages.currentWidget().isAncestorOf(field) and field.isVisible()
    assert window.focusWidget() is field
    assert bridge.core.home.config_file.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(("provider", "typed"), [("nosuch", "x"), ("", "gpt-x")])
async def test_a_model_name_naming_no_provider_is_refused_without_a_server_address(
        qtbot: QtBot, bridge: CoreBridge, provider: str, typed: str) -> None:
    """A name litellm cannot tell the provider of (nosuch/x, a bare gpt-x) with no server address was saved, and every
    turn then failed. Save refuses it as `/model` does, saying what to give, with the cursor on the provider; the
    typing stays and nothing is saved. With a server address the same name is the server's to answer to: saved."""
    window = await opened(qtbot, bridge)
    form = window.model_form
    before = bridge.core.home.config_file.read_text(encoding="utf-8")
    form.api_base.setText("")
    form.provider.setCurrentText(provider)
    form.model.setCurrentText(typed)
    assert window.show_page("General")
    assert not await window.save()
    said = window.status.text()
    assert f"'{'/'.join(filter(None, (provider, typed)))}' names no provider" in said and "openai/gpt-4o-mini" in said
    assert window.focusWidget() is form.provider and form.provider.isVisible()
    assert (form.provider.currentText(), form.model.currentText()) == (provider, typed)
    assert bridge.core.home.config_file.read_text(encoding="utf-8") == before
    form.api_base.setText("http://127.0.0.1:1/v1")
    assert "Saved" in await save(window)
    assert bridge.core.config.model == "/".join(filter(None, (provider, typed)))


async def saving_a_new_name(qtbot: QtBot, bridge: CoreBridge, provider: str) -> SettingsWindow:
    """Settings with `provider`/gpt-4o-mini typed and no server address, Save clicked on a model helper started
    anew: the save waits seconds for its answer about the name (litellm loads)."""
    window = await opened(qtbot, bridge)
    form = window.model_form
    form.api_base.setText("")
    form.provider.setCurrentText(provider)
    form.model.setCurrentText("gpt-4o-mini")
    await run_on_model_thread(model_helper().close())
    window.status.clear()
    window.save_button.click()
    return window


@pytest.mark.parametrize(("provider", "outcome"), [("openai", "Saved"), ("nosuch", "names no provider")])
async def test_save_says_it_checks_the_model_name_while_the_model_helper_starts(
        qtbot: QtBot, bridge: CoreBridge, provider: str, outcome: str) -> None:
    """Save with a new model name asks the model helper whether litellm can tell its provider; started anew, the
    helper takes seconds (litellm loads), and the window only greyed Save, saying nothing. It now says what it
    waits for, and the outcome, saved or refused, takes that note's place."""
    window = await saving_a_new_name(qtbot, bridge, provider)
    await until(lambda: window.status.text(), message="a word from Save")
    assert window.status.text() == CHECKING_NAME and not window.save_button.isEnabled()
    await until(lambda: window.status.text() != CHECKING_NAME and window.save_button.isEnabled(),
                message="the outcome")
    assert outcome in window.status.text()


async def test_typing_while_save_checks_the_model_name_is_never_silently_dropped(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """While Save waited for the model helper (seconds, started anew), the fields took typing that Save then
    neither saved nor counted as unsaved: the window showed a name config.yaml did not have, and closing did not
    ask. The pages now wait, greyed, until the check is done; afterwards the window shows what was saved, and the
    cursor is back in its field."""
    window = await opened(qtbot, bridge)
    form = window.model_form
    form.api_base.setText("")
    form.model.setCurrentText("gpt-4o-mini")
    form.model.setFocus()
    await run_on_model_thread(model_helper().close())
    window.save_button.click()
    await until(lambda: window.status.text() == CHECKING_NAME, message="the check under way")
    greyed = not form.model.isEnabled() and not window.workspace.isEnabled()
    qtbot.keyClicks(form.model, "-typed")
    await until(lambda: window.status.text() not in ("", CHECKING_NAME), message="the outcome")
    assert "Saved" in window.status.text()
    assert form.model_name() == bridge.core.config.model or window.unsaved()
    assert greyed and form.model_name() == "openai/gpt-4o-mini" and not window.unsaved()
    assert form.model.isEnabled() and window.focusWidget() is form.model


@pytest.mark.parametrize(("provider", "outcome"), [("openai", "Saved"), ("nosuch", "names no provider")])
async def test_closing_while_a_save_is_under_way_waits_for_it_and_never_asks(
        qtbot: QtBot, bridge: CoreBridge, provider: str, outcome: str) -> None:
    """Close while Save waited (here for the model helper, seconds when started anew) asked "Save your changes?"
    about the very changes being saved. Closing now waits for that save: saved, the window closes; refused, it
    stays open with the refusal, and asks nothing either way."""
    window = await saving_a_new_name(qtbot, bridge, provider)
    await until(lambda: window.status.text() == CHECKING_NAME, message="the check under way")
    close = next(b for b in window.findChildren(QPushButton) if b.text() == "Close")
    close.click()
    window.close()  # the title bar's close, too
    asked = False
    for _ in range(1000):  # 20 s at most, looking for a question all along
        asked = asked or message_box(window) is not None
        if window.status.text() not in ("", CHECKING_NAME) and not taskset.pending():
            break
        await asyncio.sleep(0.02)
    assert not asked and message_box(window) is None
    assert outcome in window.status.text()
    assert window.isVisible() == (provider == "nosuch")
    assert (bridge.core.config.model == "openai/gpt-4o-mini") == (provider == "openai")


async def test_typing_while_save_waits_for_the_keyring_is_never_silently_dropped(
        qtbot: QtBot, bridge: CoreBridge, memory_keyring: MemoryKeyring) -> None:
    """Save stores a typed key before writing config.yaml, and waits for the keyring (its password prompt open as
    long as the person takes). A value typed meanwhile was neither saved nor counted as unsaved: the window showed a
    temperature config.yaml did not have, and closing did not ask. The pages now wait, greyed, until Save is done."""
    window = await opened(qtbot, bridge)
    qtbot.keyClicks(window.model_form.key, SECRET)
    window.tabs.setCurrentIndex(1)
    temperature = window.rows["temperature"].widget
    memory_keyring.gate = threading.Event()  # the keyring's prompt is open until the test answers it
    window.save_button.click()
    await until(lambda: "set openai" in memory_keyring.calls, message="the keyring asked")
    temperature.setFocus()
    qtbot.keyClick(temperature, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(temperature, "0.5")
    memory_keyring.gate.set()
    await until(lambda: window.status.text() not in ("", CHECKING_NAME) and window.save_button.isEnabled(),
                message="the outcome")
    assert "Saved" in window.status.text() and memory_keyring.store[("nanobot-tray", "openai")] == SECRET
    on_disk = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))["temperature"]
    assert on_disk == temperature.value() or window.unsaved()  # type: ignore[union-attr]
    assert temperature.isEnabled() and not window.unsaved()

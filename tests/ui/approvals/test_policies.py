"""Settings' say over each tool, as a person sets it: "Ask before every command" makes a command the sandbox
contains wait for a yes, and an MCP tool (named "server · tool") set to Allow runs without its card; both in
force from the next call, through the one settings writer."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from desktop.core import Core
from desktop.tools import Tools
from desktop.ui.approvals.cards import ApprovalCards
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.settings import SettingsWindow
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import FAST, stdio_server
from tests.ui.approvals.test_cards import KEY, TURN, card_for, cards_of, tool_row, turn_over
from tests.ui.conftest import open_chat, until

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")


@pytest.fixture
def model_config(model_config: dict[str, Any], home_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The scripted model and our MCP test server (untrusted: its tools ask)."""
    monkeypatch.setattr("desktop.mcp.connection.BACKOFF", FAST)
    write_config(home_dir, **model_config, mcp={"servers": {"test": stdio_server()}})
    return model_config


@pytest.fixture
async def asking(qt_core: Core) -> AsyncIterator[CoreBridge]:
    made = CoreBridge(qt_core, questions=qt_core.questions)  # the windows answer questions, as in the app
    yield made
    made.close()


@pytest.fixture
async def window(asking: CoreBridge, qtbot: QtBot) -> ChatWindow:
    made: ChatWindow = await open_chat(asking, qtbot, KEY, [lambda: ApprovalCards(asking, with_background=True)])
    return made


async def settings_for(qtbot: QtBot, bridge: CoreBridge) -> SettingsWindow:
    settings = SettingsWindow(bridge, tools=bridge.core.get(Tools))
    qtbot.addWidget(settings)
    settings.resize(660, 620)
    settings.show()
    settings.tabs.setCurrentIndex(2)
    form = settings.model_form
    await until(lambda: settings.tool_policies.combos and form.provider.count() > 20
                and "keyring" in form.keyring_note.text(), timeout=30, message="the settings loaded")
    return settings


async def save(settings: SettingsWindow) -> None:
    settings.status.clear()
    settings.save_button.click()
    await until(lambda: settings.status.text(), message="saved")
    assert settings.status.text().startswith("Saved"), settings.status.text()


def saved_tools(bridge: CoreBridge) -> dict[str, str]:
    return yaml.safe_load(bridge.core.settings.path.read_text())["approvals"]["tools"]


async def test_ask_before_every_command_makes_a_sandboxed_command_wait(
        window: ChatWindow, fake: FakeOpenAI, qtbot: QtBot) -> None:
    workspace = window.bridge.workspace
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo one > one.txt"}}]}, {"content": "Ok."})
    window.send("run it", [])
    await until(lambda: turn_over(window), timeout=TURN)
    assert tool_row(window)[1] and (workspace / "one.txt").exists() and not cards_of(window).cards  # sandboxed

    settings = await settings_for(qtbot, window.bridge)
    policies = settings.tool_policies
    assert not policies.every_command.isChecked() and policies.every_command.isVisible()
    note = settings.network_mode  # its text comes late; the page scrolls rather than clip it
    await until(lambda: note.text() and note.height() >= note.heightForWidth(note.width()), message="note shown whole")
    policies.every_command.click()
    assert policies.combos["exec"].currentText() == "Ask first"  # the table shows the same choice
    if SHOTS:
        settings.grab().save(os.path.join(SHOTS, "settings-tools-ask-every-command.png"))
    await save(settings)
    assert saved_tools(window.bridge) == {"exec": "ask"}

    card = await card_for(window, fake, "echo two > two.txt")
    assert card.reason.text() == "Asking because exec is set to ask in Settings → Tools."
    assert not (workspace / "two.txt").exists()  # nothing ran before the yes
    card.allow.click()
    await until(lambda: turn_over(window) and (workspace / "two.txt").exists(), timeout=TURN)

    policies.combos["exec"].setCurrentIndex(0)  # back to "As the tool decides": the switch follows
    assert not policies.every_command.isChecked()
    await save(settings)
    assert saved_tools(window.bridge) == {}


async def test_an_mcp_tool_set_to_allow_runs_without_asking(window: ChatWindow, fake: FakeOpenAI, qtbot: QtBot) -> None:
    core = window.bridge.core
    await until(lambda: core.tools.get("mcp_test_echo") and core.tools.get("mcp_test_echo").available,  # type: ignore[union-attr]
                timeout=60, message="the MCP server connected")
    settings = await settings_for(qtbot, window.bridge)
    policies = settings.tool_policies
    labels = [policies.table.item(row, 0).text() for row in range(policies.table.rowCount())]
    assert "test · echo" in labels and "mcp_test_echo" not in labels  # named as the chat names its calls
    assert labels.index("exec") < labels.index("test · echo")  # built-in tools first
    policies.choose("mcp_test_echo", "allow")
    policies.choose("write_file", "deny")
    if SHOTS:
        settings.findChild(QScrollArea).ensureWidgetVisible(policies.combos["mcp_test_echo"])  # type: ignore[union-attr]
        settings.grab().save(os.path.join(SHOTS, "settings-tools-each-tool.png"))
    await save(settings)
    assert saved_tools(window.bridge) == {"mcp_test_echo": "allow", "write_file": "deny"}

    fake.add({"tool_calls": [{"name": "mcp_test_echo", "arguments": {"text": "hi"}}]}, {"content": "Ok."})
    window.send("echo it", [])
    await until(lambda: turn_over(window), timeout=TURN)
    result, ok = tool_row(window)
    assert ok and "hi" in str(result) and not cards_of(window).cards  # untrusted server, yet no question

    settings.hide()
    settings.show()  # opened again: what config.yaml holds
    await until(lambda: policies.combos["write_file"].currentText() == "Deny")

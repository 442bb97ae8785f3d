"""The approval card through real turns: the scripted model asks to run a command where the sandbox cannot
run, the card in the chat (or the quick prompt) shows it, and what each button does."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import yaml
from PySide6 import QtGui
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from desktop.approvals.settings import ApprovalsConfig
from desktop.conversation.transcript import Kind
from desktop.core import Core
from desktop.mcp.manager import McpServers
from desktop.mcp.names import tool_name
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.subagents import Subagents
from desktop.ui.approvals.cards import ApprovalCard, ApprovalCards
from desktop.ui.approvals.rules import ApprovalRules
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.quick_prompt import QuickPrompt
from desktop.ui.settings import SettingsWindow
from tests.approvals.test_approvals import unsandboxed_exec
from tests.fakeserver import FakeOpenAI
from tests.pipes import watched_pipe
from tests.ui.conftest import until

TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
KEY = "desktop:approve"
WAITED = 3.0  # seconds a card waits before the person answers it
SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the card looks like there


@pytest.fixture
async def asking(qt_core: Core) -> AsyncIterator[CoreBridge]:
    """The app's wiring: exec unsandboxed (bubblewrap missing), so commands ask, and the windows answer."""
    qt_core.tools.register(unsandboxed_exec(qt_core.workspace))
    made = CoreBridge(qt_core, questions=qt_core.questions)
    yield made
    made.close()


@pytest.fixture
async def window(asking: CoreBridge, qtbot: QtBot) -> ChatWindow:
    made = ChatWindow(asking, [lambda: ApprovalCards(asking, with_background=True)])  # as the approvals slice adds it
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session(KEY)
    await until(lambda: made.models[KEY].loaded)
    return made  # qtbot closes it


def cards_of(window: ChatWindow) -> ApprovalCards:
    """The chat window's strip of approval cards."""
    return next(panel for panel in window.panels if isinstance(panel, ApprovalCards))


async def card_for(window: ChatWindow, fake: FakeOpenAI, command: str) -> ApprovalCard:
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}, {"content": "Done here."})
    window.send("please run it", [])
    await until(lambda: cards_of(window).cards, timeout=TURN, message="the approval card appeared")
    card = cards_of(window).cards[0]
    assert cards_of(window).isVisible() and card.isVisible()
    return card


def tool_row(window: ChatWindow) -> tuple[str | None, bool | None]:
    rows = [r for r in window.models[KEY].rows if r.kind is Kind.TOOL and r.tool is not None]
    return (rows[-1].tool.result, rows[-1].tool.ok) if rows else (None, None)  # type: ignore[union-attr]


def listed(rules: ApprovalRules) -> list[str]:
    """The texts Settings lists under "Allowed without asking"."""
    return [label.text() for row in rules.rows
            for label in ([row] if isinstance(row, QLabel) else row.findChildren(QLabel))]


def turn_over(window: ChatWindow) -> bool:
    return not window.models[KEY].busy and tool_row(window)[1] is not None


async def test_the_card_shows_the_command_and_allow_runs_it(window: ChatWindow, fake: FakeOpenAI) -> None:
    card = await card_for(window, fake, "echo approved > made.txt")
    assert card.code.toPlainText() == "echo approved > made.txt"
    assert "Run this command?" in card.title.text() and "bubblewrap" in card.reason.text()
    assert window.composer.input.isEnabled()  # non-modal: the chat stays usable
    row = next(r for r in window.models[KEY].rows if r.kind is Kind.TOOL)
    header = [getattr(op, "text", None) for op in window.view.renderer.layout(row, 600).ops]
    assert "waiting for your answer" in header  # not "running…": nothing runs before the answer
    assert window.view.status() == "Waiting for your answer"  # and the chat's status line says so too
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "approval-card-chat.png"))
    card.allow.setFocus()  # as a click on it does
    card.allow.click()
    await until(lambda: turn_over(window), timeout=TURN)
    result, ok = tool_row(window)
    assert ok and "Exit code: 0" in str(result)
    assert window.view.status() == ""
    assert window.composer.input.hasFocus()  # the keyboard goes back to writing, not to the next button
    assert (window.bridge.workspace / "made.txt").read_text() == "approved\n"
    await until(lambda: not cards_of(window).cards and cards_of(window).isHidden())


def shown_time(window: ChatWindow) -> float | None:
    """The seconds the chat's last tool row says it ran ("0.4 s", "350 ms"), None when it shows no time."""
    row = [r for r in window.models[KEY].rows if r.kind is Kind.TOOL][-1]
    header = " ".join(op.text for op in window.view.renderer.layout(row, 600).ops
                      if isinstance(getattr(op, "text", None), str))
    shown = re.search(r"(\d+(?:\.\d+)?) (ms|s)\b", header)
    return None if shown is None else float(shown[1]) / (1000 if shown[2] == "ms" else 1)


async def test_a_steps_time_is_how_long_it_ran_not_how_long_its_question_waited(
        window: ChatWindow, fake: FakeOpenAI) -> None:
    """The person reads the command for a while before allowing it: the step's time on its row (and after a
    reload) starts when it ran, after the answer. A step denied after a while never ran: no time."""
    card = await card_for(window, fake, "sleep 0.3")
    await asyncio.sleep(WAITED)  # the card waits for the person
    card.allow.click()
    await until(lambda: turn_over(window), timeout=TURN)
    seconds = shown_time(window)
    assert seconds is not None and 0.3 <= seconds < WAITED - 1  # the sleep and the shell's start, not the wait
    session = await window.bridge.load_chat(KEY)
    [saved] = [m for m in session.messages if m.get("role") == "tool"]
    assert 0.3 <= saved["seconds"] < WAITED - 1  # what the chat shows after a restart

    card = await card_for(window, fake, "touch never.txt")
    await asyncio.sleep(1)
    card.deny.click()
    await until(lambda: not window.models[KEY].busy and tool_row(window)[1] is False, timeout=TURN)
    assert shown_time(window) is None


async def test_deny_ends_in_a_clear_tool_error_and_nothing_runs(window: ChatWindow, fake: FakeOpenAI) -> None:
    card = await card_for(window, fake, "touch denied.txt")
    card.deny.click()
    await until(lambda: turn_over(window), timeout=TURN)
    result, ok = tool_row(window)
    assert ok is False and "the user did not approve exec: touch denied.txt" in str(result)
    assert not (window.bridge.workspace / "denied.txt").exists() and not cards_of(window).cards


async def test_always_allow_saves_a_rule_listed_in_settings_and_removable(
        window: ChatWindow, fake: FakeOpenAI, qtbot: QtBot) -> None:
    card = await card_for(window, fake, "git status")
    card.always.click()
    await until(lambda: turn_over(window), timeout=TURN)
    rule = {"tool": "exec", "what": "git status", "workspace": str(window.bridge.workspace)}
    settings_file = window.bridge.core.settings.path
    assert yaml.safe_load(settings_file.read_text())["approvals"]["rules"] == [rule]

    settings = SettingsWindow(window.bridge)
    qtbot.addWidget(settings)
    settings.show()
    rules = settings.approval_rules
    await until(lambda: any("git status" in text for text in listed(rules)))
    if SHOTS:
        settings.tabs.setCurrentIndex(2)
        settings.grab().save(os.path.join(SHOTS, "approval-rules-settings.png"))
    remove = next(button for row in rules.rows for button in row.findChildren(type(settings.save_button)))
    assert remove.text() == "Remove"
    remove.click()
    await until(lambda: not yaml.safe_load(settings_file.read_text())["approvals"]["rules"])
    await until(lambda: any("Nothing yet" in text for text in listed(rules)))

    card = await card_for(window, fake, "git status")  # asks again
    card.deny.click()
    await until(lambda: not window.models[KEY].busy, timeout=TURN)


async def test_an_unanswered_card_is_denied_after_the_timeout_and_says_so(
        window: ChatWindow, fake: FakeOpenAI) -> None:
    await window.bridge.core.settings.update(lambda config: setattr(config.section(ApprovalsConfig), "timeout", 0.5))
    card = await card_for(window, fake, "touch late.txt")
    await until(lambda: turn_over(window), timeout=TURN)
    result, ok = tool_row(window)
    assert ok is False and "nobody answered within 0.5 s, so it was denied" in str(result)
    assert card.reason.text() == "Not answered within 0.5 s, so it was denied."
    assert card.allow.isHidden() and card.deny.isHidden() and card.dismiss.isVisible()
    assert not (window.bridge.workspace / "late.txt").exists()
    card.dismiss.click()
    await until(lambda: not cards_of(window).cards)


async def test_a_card_waits_for_its_own_chat_only(window: ChatWindow, fake: FakeOpenAI) -> None:
    card = await card_for(window, fake, "true")
    window.show_session("desktop:other")
    assert not cards_of(window).cards  # another chat: its card is not shown there
    window.show_session(KEY)
    assert [c.question for c in cards_of(window).cards] == [card.question]
    cards_of(window).cards[0].allow.click()
    await until(lambda: turn_over(window), timeout=TURN)


async def test_the_quick_prompt_shows_its_card(asking: CoreBridge, fake: FakeOpenAI, qtbot: QtBot) -> None:
    prompt = QuickPrompt(asking)
    qtbot.addWidget(prompt)
    prompt.popup()
    before = prompt.height()
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo quick"}}]}, {"content": "It said quick."})
    prompt.input.setText("run echo quick")
    prompt.submit()
    await until(lambda: prompt.approvals.cards, timeout=TURN)
    assert prompt.approvals.cards[0].code.toPlainText() == "echo quick" and prompt.height() > before
    if SHOTS:
        prompt.grab().save(os.path.join(SHOTS, "approval-card-quick.png"))
    prompt.approvals.cards[0].allow.click()
    await until(lambda: "It said quick." in prompt.answer.toPlainText(), timeout=TURN)
    assert not prompt.approvals.cards


async def test_a_path_the_model_chose_that_spells_markup_shows_on_the_card_as_words_and_loads_no_file(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path) -> None:
    """The model chooses the path a file tool writes to; outside the workspace the card asks, its reason naming
    the path. A path spelling <img src="/a/pipe"> was read as markup there, and Qt read the file it named as the
    card was shown: a named pipe froze the app for good. The card shows the path as words."""
    core = window.bridge.core
    await core.settings.update(lambda config: setattr(config.tools, "restrict_to_workspace", False))
    pipe = tmp_path / "pipe"
    path = f'{tmp_path}/<img src="{pipe}">/<IMG SRC=\'{pipe}\'>/note.md'
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "hi"}}]},
             {"content": "Done here."})
    window.send("write me a note", [])
    await until(lambda: cards_of(window).cards, timeout=TURN, message="the approval card appeared")
    card = cards_of(window).cards[0]
    with watched_pipe(pipe) as opened:
        window.grab()  # laid out and painted, as on screen
    assert card.reason.text() == f"Asking because {path} is outside the workspace and " \
                                 "tools.restrict_to_workspace is off."
    assert opened == [], "the card read the pipe the path named"
    card.deny.click()


def words(label: QLabel) -> str:
    """What `label` shows, as the person reads it: its markup as Qt reads it (a label's text is markup when it
    looks like some), else its text."""
    document = QTextDocument()
    if label.textFormat() != Qt.TextFormat.PlainText and QtGui.Qt.mightBeRichText(label.text()):
        document.setHtml(label.text())
    else:
        document.setPlainText(label.text())
    return document.toPlainText()


async def words_on_the_card(window: ChatWindow, pipe: Path, label: Callable[[ApprovalCard], QLabel],
                            ) -> tuple[str, list[str]]:
    """The words `label` of the approval card that comes shows, laid out and painted as on screen, and whether
    anything opened `pipe` meanwhile; the card is then denied and gone."""
    await until(lambda: cards_of(window).cards, timeout=TURN, message="the approval card appeared")
    card = cards_of(window).cards[0]
    with watched_pipe(pipe) as opened:
        window.grab()
        shown = words(label(card))
        card.deny.click()  # gone before the pipe has no watcher: a card still reading it would hang the test
        await until(lambda: not cards_of(window).cards, message="the card answered")
    return shown, opened


async def test_an_mcp_tool_named_as_markup_is_named_on_the_card_as_words_and_loads_no_file(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path) -> None:
    """An MCP server names its own tools, and the card's title names the tool asking: a tool named
    <img src="/a/pipe"> was read as markup there, and Qt read the file it named as the card was shown: a named
    pipe froze the app for good. The title names the tool as the words it is."""
    pipe = tmp_path / "pipe"
    tool = f'<img src="{pipe}">'
    raw = str(Path(__file__).parents[2] / "mcp" / "raw_server.py")
    core = window.bridge.core
    await core.settings.update(lambda config: config.section(McpConfig).servers.__setitem__(
        "raw", McpServerConfig(command=sys.executable, args=[raw, tool], timeout=30)))
    await until(lambda: "raw" in core.get(McpServers).servers
                and core.get(McpServers).servers["raw"].state == "connected", timeout=TURN, message="connected")
    fake.add({"tool_calls": [{"name": tool_name("raw", tool, set()), "arguments": {}}]}, {"content": "Named."})
    window.send("name the files", [])
    title, opened = await words_on_the_card(window, pipe, lambda card: card.title)
    assert title == f"Let the assistant use raw · {tool}?"
    assert opened == [], "the card read the pipe the tool's name pointed at"


async def test_a_background_task_named_as_markup_is_named_on_its_card_as_words_and_loads_no_file(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path) -> None:
    """The model names the background tasks it starts, and a task's card says which task asks: a task named
    <IMG SRC='/a/pipe'> was read as markup there, and Qt read the file it named as the card was shown. The card
    names the task as the words it is."""
    pipe = tmp_path / "pipe"
    label = f"<IMG SRC='{pipe}'>"
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "touch booked.txt"}}]},
             {"content": "Booked."}, {"content": "The booking is done."})
    window.bridge.core.get(Subagents).spawn("book the train", label, KEY)
    origin, opened = await words_on_the_card(window, pipe, lambda card: card.origin)
    assert origin.startswith(f"Background task “{label}” · ")
    assert opened == [], "the card read the pipe the task's name pointed at"

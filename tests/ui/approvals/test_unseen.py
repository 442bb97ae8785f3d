"""Approval questions are hard to miss (issue 27): a card the person cannot see (the chat window hidden, covered
by another window, or showing another chat) is announced by a notification at once; the chat's sidebar entry
says "Needs your answer" and the tray shows attention while a question waits; a background task's question
waits in the chat that started it, named by the task; tools are named as the chat names them, and a diff's
added and removed lines are tinted. All through the running app (the shell), its chat window and its tray."""

from __future__ import annotations

import os
import threading
from typing import Any

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from desktop.approvals.settings import ApprovalsConfig
from desktop.config import Config
from desktop.kernel.notices import Notice, OpenChat
from desktop.subagents import Subagents
from desktop.tools.base import Tool, ToolContext
from desktop.ui.app import Shell
from desktop.ui.approvals.cards import ApprovalCard
from desktop.ui.chat.sidebar import KEY_ROLE, NEEDS_ANSWER
from desktop.ui.icons import TrayState
from tests.fakeserver import FakeOpenAI
from tests.ui.approvals.test_cards import cards_of
from tests.ui.conftest import until

TURN = 60  # seconds: the first model call imports litellm, slow on a loaded machine
KEY = "desktop:asks"
SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the card and the sidebar look like there
DIFF = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n keep\n-old line\n+new line\n"


class ClockTool(Tool):
    """An MCP server's tool as the app names it ("server · tool"), asking first and showing a change."""

    name = "mcp_time_get_current_time"
    label = "time · get_current_time"
    description = "The time."
    parameters = {"type": "object", "properties": {"zone": {"type": "string"}}}

    async def execute(self, ctx: ToolContext, **args: Any) -> str:
        return "12:00"

    async def needs_approval(self, config: Config, arguments: dict[str, Any]) -> str | None:
        return "its server is not trusted"

    async def change(self, arguments: dict[str, Any]) -> str:
        return DIFF


def record_notices(shell: Shell) -> list[Notice]:
    notes: list[Notice] = []
    original = shell.notifier.notify
    shell.notifier.notify = lambda note: (notes.append(note), original(note))[1]  # type: ignore[method-assign]
    return notes


async def ask_in(shell: Shell, fake: FakeOpenAI, key: str, command: str, first: str = "run it") -> ApprovalCard:
    """Chat `key` shown in front, the model asks to run `command` there; the card that appears."""
    await shell.core.settings.update(  # type: ignore[union-attr]
        lambda config: setattr(config.tools, "restrict_to_workspace", False))  # no sandbox: exec asks
    shell.show_chat(key)
    chat = shell.chat_window()
    assert chat is not None
    await until(chat.isActiveWindow, timeout=5, message="the chat in front")
    fake.default = lambda _body: {"content": "Done."}  # once answered (questions may wait in several chats)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]})
    chat.send(first, [])
    await until(lambda: cards_of(chat).cards, timeout=TURN, message="the card")
    return cards_of(chat).cards[0]


def asking_shown(shell: Shell, key: str) -> bool:
    """Whether the chat's sidebar entry says it needs an answer (its second line), without the busy dot."""
    chat = shell.chat_window()
    assert chat is not None
    sidebar = chat.sidebar
    items = [sidebar.list.item(i) for i in range(sidebar.list.count())]
    item = next((i for i in items if i.data(KEY_ROLE) == key), None)  # None: not listed yet
    return item is not None and sidebar.delegate.detail(sidebar.list.indexFromItem(item)) == NEEDS_ANSWER


async def test_a_card_hidden_after_it_appeared_is_announced_at_once(shell: Shell, fake: FakeOpenAI) -> None:
    notes = record_notices(shell)
    card = await ask_in(shell, fake, KEY, "touch hidden.txt", "make it")
    assert not notes  # in front: the card is enough
    chat = shell.chat_window()
    assert chat is not None
    chat.hide()  # the person hides the window without answering
    await until(lambda: notes, timeout=5, message="the notification")
    assert notes[0].title == "“make it” — allow exec?" and notes[0].target == OpenChat(KEY)
    card.allow.click()
    await until(lambda: not chat.bridge.conversations.busy(KEY), timeout=TURN)
    assert len(notes) == 1 or "Done." in notes[1].body  # the question once (then the reply, unseen)


async def test_another_chat_shown_or_another_window_in_front_announces_the_card(
        shell: Shell, fake: FakeOpenAI, qtbot: QtBot) -> None:
    notes = record_notices(shell)
    card = await ask_in(shell, fake, KEY, "touch other.txt", "switch away")
    shell.show_chat("desktop:elsewhere")  # the card waits in a chat no longer shown
    await until(lambda: notes, timeout=5, message="the notification")
    assert notes[0].title == "“switch away” — allow exec?"
    card.deny.click()
    await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)

    card = await ask_in(shell, fake, KEY, "touch covered.txt", "again")
    asked = len(notes)
    other = QWidget()  # another app's window, in front of the chat
    qtbot.addWidget(other)
    other.show()
    other.activateWindow()
    await until(lambda: len(notes) > asked, timeout=5, message="the notification for the covered card")
    assert notes[-1].body.startswith("touch covered.txt")
    card.deny.click()
    await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)


async def test_the_sidebar_and_the_tray_say_a_question_waits(shell: Shell, fake: FakeOpenAI) -> None:
    await ask_in(shell, fake, "desktop:first", "true", "first chat")
    chat = shell.chat_window()
    assert chat is not None
    first_card_question = cards_of(chat).cards[0].question
    await ask_in(shell, fake, KEY, "touch later.txt", "second chat")  # the first one's card still waits
    await until(lambda: asking_shown(shell, "desktop:first") and asking_shown(shell, KEY), timeout=5,
                message="both chats marked in the sidebar")
    assert shell.tray.state is TrayState.ATTENTION
    assert "Waiting for your answer: first chat, second chat" in shell.tray.icon.toolTip()
    if SHOTS:
        chat.resize(1040, 720)
        chat.grab().save(os.path.join(SHOTS, "needs-your-answer.png"))
    shell.show_chat("desktop:first")  # back to the first chat, where its card waits
    [card] = cards_of(chat).cards
    assert card.question is first_card_question
    card.allow.click()
    await until(lambda: not asking_shown(shell, "desktop:first"), timeout=TURN)
    shell.show_chat(KEY)
    assert asking_shown(shell, KEY)  # still waiting there
    cards_of(chat).cards[0].allow.click()
    await until(lambda: not shell.bridge.conversations.asking(), timeout=TURN)
    await until(lambda: not asking_shown(shell, KEY), timeout=5)
    assert "Waiting for your answer" not in shell.tray.icon.toolTip()


def tray_calm(shell: Shell, state: TrayState = TrayState.IDLE) -> bool:
    """The tray as it is with no question waiting: `state`, and a tooltip that asks for nothing."""
    tip = shell.tray.icon.toolTip()
    return shell.tray.state is state and "Waiting for your answer" not in tip and "attention" not in tip


async def test_the_tray_calms_down_once_a_question_is_answered_timed_out_or_withdrawn(
        shell: Shell, fake: FakeOpenAI) -> None:
    """A question announced by a notification (its chat out of sight) puts the tray in attention; answering it
    (by the notification's button, or on the card, the chat reached from its sidebar), its timeout or a
    stopped turn takes that away again: the tray says the turn works on, then is idle. (The answer that ends
    the turn unseen is announced in its turn, and wants attention rightly: looked at while the turn goes on.)"""
    notes = record_notices(shell)
    going_on = threading.Event()  # the answer after the question is held while the test looks at the turn

    async def announced(command: str) -> ApprovalCard:
        card = await ask_in(shell, fake, KEY, command, f"run {command}")
        going_on.clear()
        fake.default = lambda _body: {"content": "Done.", "after": going_on}  # the turn goes on after the answer
        asked = len(notes)
        shell.chat_window().show_session("desktop:elsewhere")  # type: ignore[union-attr]  # another chat, picked
        # in the sidebar: the card is out of sight
        await until(lambda: len(notes) > asked, timeout=5, message="the notification")
        assert shell.tray.state is TrayState.ATTENTION and "Waiting for your answer" in shell.tray.icon.toolTip()
        return card

    async def working_on(out_of_sight: bool) -> None:
        await until(lambda: tray_calm(shell, TrayState.WORKING), timeout=TURN, message="working, no attention")
        going_on.set()
        await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)
        if out_of_sight:  # its announcement follows the turn's end (once the chat is loaded): the next chat shown
            # clears the attention it wants only if it came first
            await until(lambda: notes[-1].body == "Done.", timeout=10, message="the reply out of sight, announced")

    await announced("touch by-notification.txt")
    action = notes[-1].on_action
    assert action is not None
    action("allow")  # the notification's Allow once
    await working_on(out_of_sight=True)

    card = await announced("touch on-the-card.txt")
    shell.chat_window().show_session(KEY)  # type: ignore[union-attr]  # back in the chat by the sidebar
    card.deny.click()  # on the card
    await working_on(out_of_sight=False)

    await shell.core.settings.update(  # type: ignore[union-attr]
        lambda config: setattr(config.section(ApprovalsConfig), "timeout", 3.0))
    await announced("touch timed-out.txt")
    await working_on(out_of_sight=True)  # nobody answered
    assert "nobody answered" in str(fake.requests[-1])

    await announced("touch stopped.txt")
    going_on.set()  # no answer is asked for after a stop; were one, it would not wait
    shell.bridge.stop(KEY)  # the person stops the turn: its question is withdrawn
    await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)
    assert tray_calm(shell), (shell.tray.state, shell.tray.icon.toolTip())


async def test_a_background_tasks_question_waits_in_its_own_chat_named_by_the_task(
        shell: Shell, fake: FakeOpenAI) -> None:
    await shell.core.settings.update(  # type: ignore[union-attr]
        lambda config: setattr(config.tools, "restrict_to_workspace", False))
    notes = record_notices(shell)
    fake.add({"content": "Sure."})
    shell.show_chat(KEY)
    chat = shell.chat_window()
    assert chat is not None
    chat.send("plan the trip", [])
    await until(lambda: shell.bridge.session_title(KEY) == "plan the trip", timeout=TURN)
    await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "touch booked.txt"}}]},
             {"content": "Booked."}, {"content": "The booking is done."})
    shell.show_chat("desktop:elsewhere")  # the person is in another chat when the task asks
    shell.core.get(Subagents).spawn("book the train", "Book the train", KEY)  # type: ignore[union-attr]
    await until(lambda: notes, timeout=TURN, message="the notification")
    assert notes[0].title == "“plan the trip” · “Book the train” — allow exec?" and notes[0].target == OpenChat(KEY)
    assert not cards_of(chat).cards  # not in the chat shown: in the one that started the task
    await until(lambda: asking_shown(shell, KEY), timeout=5)
    shell.show_chat(KEY)  # what clicking the notification does
    [card] = cards_of(chat).cards
    assert card.origin.isVisible() and card.origin.text() == "Background task “Book the train” · plan the trip"
    card.allow.click()
    await until(lambda: (shell.core.workspace / "booked.txt").exists(), timeout=TURN)  # type: ignore[union-attr]


async def test_a_card_names_an_mcp_tool_as_the_chat_does_and_tints_its_diff(
        shell: Shell, fake: FakeOpenAI) -> None:
    shell.core.tools.register(ClockTool())  # type: ignore[union-attr]
    notes = record_notices(shell)
    shell.show_chat(KEY)
    chat = shell.chat_window()
    assert chat is not None
    await until(chat.isActiveWindow, timeout=5, message="the chat in front")
    fake.add({"tool_calls": [{"name": "mcp_time_get_current_time", "arguments": {"zone": "Europe/Paris"}}]},
             {"content": "Noon."})
    chat.send("what time is it?", [])
    await until(lambda: cards_of(chat).cards, timeout=TURN, message="the card")
    card = cards_of(chat).cards[0]
    assert card.title.text() == "<b>Let the assistant use time · get_current_time?</b>"
    assert "mcp_time" not in card.reason.text()
    tints = {selection.cursor.block().text(): selection.format.background().color()
             for selection in card.code.extraSelections()}
    assert set(tints) == {"-old line", "+new line"}  # the diff's own lines, not its headers or context
    added, removed = tints["+new line"], tints["-old line"]
    assert added.green() > added.red() and removed.red() > removed.green()
    if SHOTS:
        card.grab().save(os.path.join(SHOTS, "approval-card-diff-light.png"))
    dark_card = dark(card)
    dark_tints = [s.format.background().color() for s in dark_card.code.extraSelections()]
    assert all(colour.lightness() < 110 for colour in dark_tints)  # dark tints on a dark base: text stays legible
    if SHOTS:
        dark_card.grab().save(os.path.join(SHOTS, "approval-card-diff-dark.png"))
    dark_card.deleteLater()
    chat.hide()
    await until(lambda: notes, timeout=5, message="the notification")
    assert notes[0].title == "“what time is it?” — allow time · get_current_time?"
    card.deny.click()
    await until(lambda: not shell.bridge.conversations.busy(KEY), timeout=TURN)


def dark(card: ApprovalCard) -> ApprovalCard:
    """The same question on a card made while the desktop's theme is dark."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    light = QPalette(app.palette())
    palette = QPalette(light)
    for role, colour in ((QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.AlternateBase, "#262626"),
                         (QPalette.ColorRole.Window, "#2b2b2b"),
                         (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.WindowText, "#e6e6e6")):
        palette.setColor(role, QColor(colour))
    app.setPalette(palette)
    try:
        made = ApprovalCard(card.question)
        made.resize(680, made.sizeHint().height())
        made.grab()  # laid out and painted under the dark theme
    finally:
        app.setPalette(light)
    return made

"""Hover actions on messages: Copy, Regenerate the last answer, Edit the last question, Branch (tests/ui/chat/test_branches.py); each redo replaces
the last turn in the chat and in its saved session."""

from __future__ import annotations

import json

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QGuiApplication

from desktop.conversation.transcript import Kind
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.ui.chat.test_window import TURN, hover, kinds, model_of, saved_messages, type_and_send
from tests.ui.conftest import until


def offered(window: ChatWindow) -> list[str]:
    actions = window.view.row_actions
    if not actions.isVisible():
        return []
    buttons = (actions.copy_button, actions.regenerate_button, actions.edit_button, actions.branch_button)
    return [b.text() for b in buttons if b.isVisible()]


async def ask(qtbot, window: ChatWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    type_and_send(qtbot, window, text)
    await until(lambda: not model_of(window).busy and kinds(window)[-1] is Kind.ASSISTANT, timeout=TURN)


async def test_copy_and_regenerate_the_last_answer(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                   qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "First **answer**."}, {"content": "Second answer."}, {"content": "A better answer."})
    await ask(qtbot, window, "one")
    await ask(qtbot, window, "two")
    hover(window, 1)  # an earlier answer: Copy and Branch only
    assert offered(window) == ["Copy", "Branch"]
    qtbot.mouseClick(window.view.row_actions.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "First **answer**."

    hover(window, 3)
    assert offered(window) == ["Copy", "↻ Regenerate", "Branch"]
    qtbot.mouseClick(window.view.row_actions.regenerate_button, Qt.MouseButton.LeftButton)
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "A better answer.",
                timeout=TURN)
    assert [r.text for r in model_of(window).rows] == ["one", "First **answer**.", "two", "A better answer."]
    assert [m["content"] for m in saved_messages(bridge, "desktop:test")] == [
        "one", "First **answer**.", "two", "A better answer."]
    assert "Second answer." not in json.dumps(fake.requests[-1]["messages"])


async def test_edit_the_last_question_replaces_its_turn(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                        qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    hover(window, 0)
    assert offered(window) == ["Copy", "Edit", "Branch"]
    qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
    assert window.composer.input.toPlainText() == "Biggest city in France?"
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)  # changed my mind: nothing changes
    assert window.isVisible() and window.composer.input.toPlainText() == "" and kinds(window) == [
        Kind.USER, Kind.ASSISTANT]

    hover(window, 1)
    hover(window, 0)
    qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
    window.composer.input.setPlainText("Second biggest city in France?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == "Lyon is second.",
                timeout=TURN)
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert [m["content"] for m in saved_messages(bridge, "desktop:test")] == [
        "Second biggest city in France?", "Lyon is second."]
    assert last_user_text(fake.requests[-1]) == "Second biggest city in France?"
    assert "Paris." not in json.dumps(fake.requests[-1]["messages"])


async def test_moving_from_message_to_message_keeps_every_line_in_view(window: ChatWindow, fake: FakeOpenAI,
                                                                       qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "echo: Are you there? A line as wide as the column needs."})
    await ask(qtbot, window, "Are you there?")
    hover(window, 1)  # over the answer's text: the selector takes that block
    placed = window.view.selector.placed
    assert placed is not None
    answer, lines = placed[1], placed[1].size().height()
    bubble = window.view.row_rect(0)
    hover(window, 0, QPointF(bubble.right() - 40, bubble.top() + 24))  # then over the short question's text
    assert window.view.selector.placed is not None and window.view.selector.placed[1] is not answer
    assert answer.size().height() == lines  # the answer was not re-wrapped to the question's narrow width


async def test_regenerated_answers_are_kept_to_flip_through_and_the_one_shown_is_history(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Call her Miso."}, {"content": "Call her Pepper."}, {"content": "Call her Luna."})
    await ask(qtbot, window, "a name for my cat?")
    actions = window.view.row_actions
    hover(window, 1)
    assert not actions.count_label.isVisible()  # one answer: nothing to flip through
    for answer in ("Call her Pepper.", "Call her Luna."):
        hover(window, 0)
        hover(window, 1)
        qtbot.mouseClick(actions.regenerate_button, Qt.MouseButton.LeftButton)
        await until(lambda a=answer: not model_of(window).busy and model_of(window).rows[-1].text == a,  # type: ignore[misc]
                    timeout=TURN)

    def counted() -> str:  # what the last answer's toolbar says, hovered afresh
        hover(window, 0)
        hover(window, 1)
        return actions.count_label.text() if actions.count_label.isVisible() else ""
    await until(lambda: counted() == "3/3")
    assert not actions.next_button.isEnabled()
    window.grab().save("/tmp/alts-3of3.png")
    for shown, answer in (("2/3", "Call her Pepper."), ("1/3", "Call her Miso.")):
        qtbot.mouseClick(actions.previous_button, Qt.MouseButton.LeftButton)  # ‹
        await until(lambda a=answer: model_of(window).rows[-1].text == a)  # type: ignore[misc]
        hover(window, 0)
        hover(window, 1)
        assert actions.count_label.text() == shown
    assert not actions.previous_button.isEnabled()
    window.grab().save("/tmp/alts-1of3.png")
    assert [r.text for r in model_of(window).rows] == ["a name for my cat?", "Call her Miso."]

    reopened = ChatWindow(bridge)  # the chat opened afresh shows where the person left it
    qtbot.addWidget(reopened)
    reopened.resize(900, 640)
    reopened.show()
    reopened.show_session("desktop:test")
    await until(lambda: reopened.models["desktop:test"].loaded)
    hover(reopened, 0)
    hover(reopened, 1)
    assert reopened.view.row_actions.count_label.text() == "1/3"
    assert reopened.models["desktop:test"].rows[-1].text == "Call her Miso."
    reopened.close()

    fake.add({"content": "Then Pepper."})
    await ask(qtbot, window, "and a second cat?")
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "Call her Miso." in sent and "Call her Pepper." not in sent and "Call her Luna." not in sent
    hover(window, 1)  # an earlier answer: it keeps its three, but does not flip
    assert not actions.count_label.isVisible()

"""Finding text: Ctrl+F in the open chat, Ctrl+K across every chat (titles and messages)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.session import Session
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.ui.conftest import until

SHOTS = os.environ.get("SEARCH_SHOTS", "")  # a folder: save what the tests show, to look at


def shot(window: ChatWindow, name: str) -> None:
    if SHOTS:
        window.repaint()
        window.grab().save(str(Path(SHOTS) / f"{name}.png"))


async def save_chat(bridge: CoreBridge, key: str, title: str, texts: list[str]) -> None:
    """A saved chat: the texts alternate between questions and answers."""
    session = Session(key, metadata={"title": title})
    roles = ("user", "assistant")
    await bridge.core.sessions.append(session, *({"role": roles[n % 2], "content": text}
                                                 for n, text in enumerate(texts)))


def long_chat() -> list[str]:
    texts = []
    for n in range(40):
        texts.append(f"Question {n}: tell me about topic {n}.")
        body = f"Here is an answer about topic {n}.\n\nSome more words to fill the answer out a bit, line by line."
        if n in (5, 22):
            body += "\n\nThe Lighthouse keeper wrote down the lighthouse log and a third LIGHTHOUSE note."
        texts.append(body)
    return texts


async def open_chat(window: ChatWindow, key: str) -> None:
    window.show_session(key)
    await until(lambda: window.models[key].loaded)
    window.view.viewport().repaint()


async def test_ctrl_f_highlights_counts_and_steps_through_matches(window: ChatWindow, bridge: CoreBridge,
                                                                  qtbot) -> None:  # type: ignore[no-untyped-def]
    await save_chat(bridge, "desktop:long", "Long chat", long_chat())
    await open_chat(window, "desktop:long")
    assert window.view.at_bottom()
    window.activateWindow()
    window.composer.input.setFocus()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    bar = window.find_bar
    assert bar.isVisible() and QApplication.focusWidget() is bar.field

    qtbot.keyClicks(bar.field, "lighthouse")
    assert bar.count.text() == "1 of 6"  # three in each of two answers, any case
    first_row = bar.matches[0][0]
    assert window.models["desktop:long"].rows[first_row].text.count("ighthouse") == 2
    rect = window.view.row_rect(first_row)
    assert rect.bottom() > 0 and rect.top() < window.view.viewport().height()  # scrolled up to it
    assert not window.view.at_bottom()
    window.view.viewport().repaint()
    shot(window, "find_bar")

    for expected in ("2 of 6", "3 of 6", "4 of 6"):
        qtbot.keyClick(bar.field, Qt.Key.Key_Return)
        assert bar.count.text() == expected
    second_row = bar.matches[3][0]
    assert second_row > first_row + 10
    rect = window.view.row_rect(second_row)
    assert rect.bottom() > 0 and rect.top() < window.view.viewport().height()
    qtbot.keyClick(bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert bar.count.text() == "3 of 6"
    for _ in range(4):
        qtbot.keyClick(bar.field, Qt.Key.Key_Return)
    assert bar.count.text() == "1 of 6"  # past the last: round to the first

    qtbot.keyClicks(bar.field, "zzz")
    assert bar.count.text() == "No matches"

    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)  # closes the bar, not the window
    assert not bar.isVisible() and window.isVisible()
    assert QApplication.focusWidget() is window.composer.input
    assert window.view.marks is None


async def test_esc_in_the_composer_closes_an_open_find_bar_first(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    window.find_bar.open("hello")
    window.composer.input.setFocus()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
    assert not window.find_bar.isVisible() and window.isVisible()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)  # with the bar closed Esc hides the window as before
    assert not window.isVisible()


async def test_the_count_follows_a_streaming_answer_and_another_chat(window: ChatWindow, bridge: CoreBridge,
                                                                     qtbot) -> None:  # type: ignore[no-untyped-def]
    await save_chat(bridge, "desktop:one", "One", ["find the apple", "an apple a day"])
    await save_chat(bridge, "desktop:two", "Two", ["no fruit here", "none"])
    await open_chat(window, "desktop:one")
    window.find_bar.open("apple")
    assert window.find_bar.count.text() == "1 of 2"
    model = window.models["desktop:one"]
    model.rows[1].text += " and another apple"
    model.touch(model.rows[1])
    await until(lambda: window.find_bar.count.text() == "1 of 3")
    await open_chat(window, "desktop:two")
    await until(lambda: window.find_bar.count.text() == "No matches")

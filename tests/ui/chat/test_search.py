"""Finding text: Ctrl+F in the open chat, Ctrl+K across every chat (titles and messages)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.session.session import Session
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
    await save_chat(bridge, "desktop:three", "Three", ["apples?", "Apples!"])
    window.show_session("desktop:three")  # the bar counts before the chat is read, and again once it is
    await until(lambda: window.find_bar.count.text() == "2 matches")
    qtbot.keyClick(window.find_bar.field, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.find_bar.count.text() == "2 of 2"


def listed(window: ChatWindow) -> list[str]:
    results = window.search_all.results
    return [results.item(n).text() for n in range(results.count())] if results.isVisible() else []


async def test_ctrl_k_lists_chats_by_title_and_message_and_opens_the_hit(window: ChatWindow, bridge: CoreBridge,
                                                                          qtbot) -> None:  # type: ignore[no-untyped-def]
    await save_chat(bridge, "desktop:long", "Trip notes", long_chat())
    await save_chat(bridge, "desktop:light", "Lighthouse history", ["when was it built?", "In 1902."])
    await save_chat(bridge, "desktop:soup", "Soup", ["a recipe please", "Leek and potato."])
    for age, key in enumerate(("desktop:soup", "desktop:light", "desktop:long")):
        path = bridge.core.sessions.path_for(key)
        os.utime(path, (1_700_000_000 - age, 1_700_000_000 - age))
    window.activateWindow()
    window.composer.input.setFocus()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.search_all
    assert palette.isVisible() and QApplication.focusWidget() is palette.field
    await until(lambda: listed(window) == ["Soup", "Lighthouse history", "Trip notes"], message="recent chats")

    qtbot.keyClicks(palette.field, "LightHouse")
    await until(lambda: listed(window) == ["Lighthouse history", "Trip notes"], message="hits")
    trip = palette.results.item(1).data(Qt.ItemDataRole.UserRole + 1)
    assert "lighthouse log" in trip.snippet and trip.matches == 2
    await until(lambda: palette.results.currentRow() == 0)
    qtbot.keyClick(palette.field, Qt.Key.Key_Down)
    assert palette.results.currentRow() == 1
    shot(window, "search_all")

    qtbot.keyClick(palette.field, Qt.Key.Key_Return)
    assert not palette.isVisible()
    await until(lambda: window.current_key == "desktop:long" and window.models["desktop:long"].loaded)
    bar = window.find_bar
    await until(lambda: bar.count.text() == "1 of 6", message="the chat opens at its first hit")
    assert bar.field.text() == "LightHouse" and QApplication.focusWidget() is bar.field
    rect = window.view.row_rect(bar.matches[0][0])
    assert rect.bottom() > 0 and rect.top() < window.view.viewport().height()
    shot(window, "search_all_opened")
    bar.close_bar()

    window.search_all.open()  # a title hit opens the chat at its end, without the find bar
    palette.field.setText("history")
    await until(lambda: listed(window) == ["Lighthouse history"])
    qtbot.keyClick(palette.field, Qt.Key.Key_Return)
    assert window.current_key == "desktop:light" and not bar.isVisible()


async def test_a_new_keystroke_supersedes_the_search_and_esc_closes(window: ChatWindow, bridge: CoreBridge,
                                                                    qtbot) -> None:  # type: ignore[no-untyped-def]
    await save_chat(bridge, "desktop:soup", "Soup", ["a recipe please", "Leek and potato."])
    await save_chat(bridge, "desktop:tea", "Tea", ["green or black?", "Green."])
    palette = window.search_all
    palette.open()
    palette.field.setText("potato")
    superseded = palette._task
    palette.field.setText("green")
    await until(lambda: listed(window) == ["Tea"])
    assert superseded is not None and superseded.cancelled()
    palette.field.setText("potato")
    qtbot.keyClick(palette.field, Qt.Key.Key_Return)  # before the list shows the potato chat: it opens once found
    await until(lambda: window.current_key == "desktop:soup", message="Enter typed ahead of the results")
    assert not palette.isVisible() and window.find_bar.field.text() == "potato"
    palette.open()
    palette.field.setText("nothing like it")
    await until(lambda: palette.status.isVisible() and palette.status.text() == "No chat matches")
    qtbot.keyClick(palette.field, Qt.Key.Key_Escape)
    assert not palette.isVisible() and window.isVisible()
    assert QApplication.focusWidget() is window.composer.input

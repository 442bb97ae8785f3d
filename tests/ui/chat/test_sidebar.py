"""The chat list: a rename the person is typing survives the chat's turn ending, and the busy dot shows."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLineEdit

from desktop.session.session import SessionInfo
from desktop.ui.chat.sidebar import SessionList

KEY = "desktop:a"


def listed(qtbot, busy: set[str]) -> SessionList:  # type: ignore[no-untyped-def]
    sidebar = SessionList()
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 300)
    sidebar.show()
    sidebar.set_sessions([SessionInfo(KEY, "Plan my week", "", 2)], KEY, busy)
    return sidebar


def renamed(qtbot, sidebar: SessionList) -> list[str]:  # type: ignore[no-untyped-def]
    titles: list[str] = []
    sidebar.rename_requested.connect(lambda key, title: titles.append(title))
    sidebar.start_rename(KEY)
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Plan my week"
    editor.setText("Weekly")
    return titles


def test_a_turn_ending_while_a_title_is_typed_keeps_the_typing(qtbot) -> None:  # type: ignore[no-untyped-def]
    sidebar = listed(qtbot, {KEY})
    titles = renamed(qtbot, sidebar)
    sidebar.set_busy(KEY, False)  # the chat's answer finished while the person was typing
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Weekly"
    qtbot.keyClicks(editor, " plan")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    sidebar.set_busy(KEY, True)  # Return commits on the next pass of the event loop: a turn may start first
    qtbot.waitUntil(lambda: titles == ["Weekly plan"], timeout=2000)
    assert sidebar.title_of(KEY) == "Weekly plan"


def picture(sidebar: SessionList) -> QImage:
    sidebar.list.viewport().repaint()
    return sidebar.list.viewport().grab().toImage()


def test_a_busy_chat_shows_a_dot_until_its_turn_ends(qtbot) -> None:  # type: ignore[no-untyped-def]
    sidebar = listed(qtbot, set())
    idle = picture(sidebar)
    sidebar.set_busy(KEY, True)
    busy = picture(sidebar)
    assert busy != idle
    sidebar.set_busy(KEY, False)
    assert picture(sidebar) == idle
    sidebar.set_sessions([SessionInfo(KEY, "Plan my week", "", 2)], KEY, {KEY})
    assert picture(sidebar) == busy

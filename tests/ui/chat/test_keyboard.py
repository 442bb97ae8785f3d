"""Typing anywhere in the chat window writes in the composer: from the sidebar and the model picker as from the
transcript, while the keys that work there (arrows and Enter in the list of chats) keep doing so."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QWidget

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.sidebar import KEY_ROLE
from desktop.ui.chat.window import ChatWindow
from tests.ui.conftest import until


async def test_typing_in_the_sidebar_or_header_writes_in_the_composer(window: ChatWindow, bridge: CoreBridge,
                                                                      qtbot) -> None:  # type: ignore[no-untyped-def]
    window.activateWindow()
    window.new_chat()
    await until(lambda: len(window.sidebar.session_keys()) >= 1)
    composer = window.composer.input
    for widget, text in ((window.sidebar.list, "from the list "), (window.sidebar.new_button, "the button "),
                         (window.model_picker, "the picker")):
        widget.setFocus()
        qtbot.keyClicks(widget, text[0])
        assert QApplication.focusWidget() is composer
        qtbot.keyClicks(composer, text[1:])  # where the keys go once the composer has the focus
    assert composer.toPlainText() == "from the list the button the picker"


async def test_arrows_and_enter_still_move_through_the_chats(window: ChatWindow, bridge: CoreBridge,
                                                             qtbot) -> None:  # type: ignore[no-untyped-def]
    for key in ("desktop:one", "desktop:two"):
        await bridge.update_chat(key, title=key.split(":")[1].title())  # two saved chats in the sidebar
    await window.refresh_sessions()
    await until(lambda: {"desktop:one", "desktop:two"} <= set(window.sidebar.session_keys()))
    listed = window.sidebar.list
    listed.setFocus()
    chats = [i for i in range(listed.count()) if listed.item(i).data(KEY_ROLE)]  # not the date groups' headers
    listed.setCurrentRow(chats[0])
    first = window.current_key
    qtbot.keyClick(listed, Qt.Key.Key_Down)
    assert listed.currentRow() == chats[1] and window.current_key != first
    assert QApplication.focusWidget() is listed  # the keyboard stays in the list while moving through it
    qtbot.keyClick(listed, Qt.Key.Key_Up)
    assert window.current_key == first and window.composer.input.toPlainText() == ""


def accent_pixels(widget: QWidget) -> int:
    """Pixels of the palette's highlight colour in the widget as drawn: the focus ring is drawn in it."""
    image = widget.grab().toImage()
    accent = widget.palette().color(QPalette.ColorRole.Highlight)
    return sum(1 for y in range(image.height()) for x in range(image.width())
               if abs(image.pixelColor(x, y).red() - accent.red()) + abs(image.pixelColor(x, y).green() - accent.green())
               + abs(image.pixelColor(x, y).blue() - accent.blue()) < 40)


async def test_the_new_chat_button_and_the_list_show_where_the_keyboard_is(
        window: ChatWindow, bridge: CoreBridge) -> None:
    await bridge.update_chat("desktop:one", title="One")
    await window.refresh_sessions()
    window.activateWindow()
    for widget in (window.sidebar.new_button, window.sidebar.list):
        window.composer.input.setFocus()
        unfocused = accent_pixels(widget)
        widget.setFocus()
        await until(widget.hasFocus)
        assert accent_pixels(widget) > unfocused + 100, widget.objectName()  # a ring all round, not a dot

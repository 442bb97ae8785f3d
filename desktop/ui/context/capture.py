"""Reading what is on the desktop, at the person's request only: the selection or the clipboard through
QClipboard, a window or the screen through QScreen.grabWindow.

On X11 a window's picture is read from the screen, so whatever covers it (our own quick prompt or chat) would
be in it: `hidden_while` takes our window away first and waits until the X server has drawn what was under it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint
from PySide6.QtGui import QClipboard, QCursor, QGuiApplication, QImage, QPixmap
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from desktop.context.quoting import Snippet, snippet
from desktop.context.x11 import selection_text

SELECTION = "Selected text"
CLIPBOARD = "Clipboard"
REPAINT_WAIT = 0.25  # seconds for the windows under ours to be drawn again once ours is hidden
HIDE_WITHIN = 2.0  # seconds at most to wait for our window to be unmapped


def read_selection() -> Snippet | None:
    """The selected text (X11 PRIMARY, or Wayland's primary selection), else the clipboard's text, else None.
    Blocking for at most a second on X11 (a slow selection owner): run it in a thread there."""
    if QGuiApplication.platformName() == "xcb":
        return read_x11_selection()
    board = QGuiApplication.clipboard()
    if board.supportsSelection():
        text = board.text(QClipboard.Mode.Selection)
        if text.strip():
            return snippet(SELECTION, text)
    return read_clipboard()


def read_x11_selection() -> Snippet | None:
    """`read_selection` on X11, without Qt (so it may run on a worker thread)."""
    for name, source in (("PRIMARY", SELECTION), ("CLIPBOARD", CLIPBOARD)):
        text = selection_text(name)
        if text and text.strip():
            return snippet(source, text)
    return None


def read_clipboard() -> Snippet | None:
    text = QGuiApplication.clipboard().text(QClipboard.Mode.Clipboard)
    return snippet(CLIPBOARD, text) if text.strip() else None


def grab_window(wid: int) -> QPixmap:
    """The window's picture (an empty pixmap when it is gone or the platform cannot read windows)."""
    screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
    return screen.grabWindow(wid)


def grab_screen() -> tuple[QPixmap, QPoint]:
    """The whole screen under the mouse, for picking a region of it, and where that screen begins."""
    screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
    return screen.grabWindow(0), screen.geometry().topLeft()


def png_bytes(image: QImage) -> bytes:
    """PNG-encode `image` (a QImage, not a QPixmap: this may run on a worker thread)."""
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stubs say bytes; only str works
    buffer.close()
    return bytes(data.data())


@asynccontextmanager
async def hidden_while(window: QWidget) -> AsyncIterator[None]:
    """Hide `window` (if shown) for the time of a capture, and bring it back after, focused as before."""
    if not window.isVisible():
        yield
        return
    window.hide()
    deadline = time.monotonic() + HIDE_WITHIN
    while window.isVisible() and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    # The loop's turns while we wait send the unmap to the X server. Never QApplication.sync() here: it runs
    # Qt's event loop inside this step, and a task woken then is stepped inside it, fails to enter and never
    # wakes again (tests/ui/context/test_capture.py).
    await asyncio.sleep(REPAINT_WAIT)
    try:
        yield
    finally:
        if isValid(window):  # else closed meanwhile (the app quit while the portal's dialog was up)
            window.show()
            window.raise_()
            window.activateWindow()

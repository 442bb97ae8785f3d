"""A feature's strip in the chat window, above the composer (the background tasks of the chat shown, the
questions waiting in it): the window tells each one which chat it shows, and the strip decides whether it has
anything to show there."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame


class ChatPanel(QFrame):
    # Something in the strip that held the keyboard focus went away (an answered card): the window gives the
    # focus back to its input, or Qt would hand it to whatever button comes next.
    focus_freed = Signal()

    def show_session(self, key: str) -> None:
        """The chat window now shows chat `key`."""
        raise NotImplementedError

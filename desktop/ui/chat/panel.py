"""A feature's strip in the chat window, above the composer (the background tasks of the chat shown): the
window tells each one which chat it shows, and the strip decides whether it has anything to show there."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame


class ChatPanel(QFrame):
    def show_session(self, key: str) -> None:
        """The chat window now shows chat `key`."""
        raise NotImplementedError

"""A feature's strip in the chat window, above the composer (the background tasks of the chat shown, the
questions waiting in it): the window tells each one which chat it shows, and the strip decides whether it has
anything to show there. A strip may also put a widget in the chat's header (`header_widget`: a menu of what
can be done with the chat shown, such as Export), a column beside the transcript (`side_widget`: shown and
hidden by the strip itself, from its header widget), files in the message box as a drop would
(`attach_requested`), something about a row of the transcript when it is hovered (`row_tip`: what an answer
cost), a button in the small toolbar over a hovered message (`row_button`, shown over the rows `offer_row`
accepts: Read aloud), and the wish to open Settings where a problem's cure is (`settings_requested`)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QAbstractButton, QFrame, QWidget

from desktop.conversation.transcript import ChatRow


class ChatPanel(QFrame):
    # Something in the strip that held the keyboard focus went away (an answered card): the window gives the
    # focus back to its input, or Qt would hand it to whatever button comes next.
    focus_freed = Signal()
    # Files (absolute paths) to attach to the person's next message, as chips in the message box.
    attach_requested = Signal(list)
    # Something the strip says is cured in Settings: the window asks the app to open it.
    settings_requested = Signal()

    def show_session(self, key: str) -> None:
        """The chat window now shows chat `key`."""
        raise NotImplementedError

    def header_widget(self) -> QWidget | None:
        """A widget for the chat's header, beside the model picker; None for none."""
        return None

    def side_widget(self) -> QWidget | None:
        """A column to the right of the transcript and message box, hidden until the strip shows it; None for
        none."""
        return None

    def row_tip(self, rows: Sequence[ChatRow], index: int) -> str:
        """The tooltip of row `index` of the chat shown, when hovered; "" for none."""
        return ""

    def row_button(self) -> QAbstractButton | None:
        """A button for the toolbar over a hovered message, beside Copy; None for none."""
        return None

    def offer_row(self, row: ChatRow) -> bool:
        """The toolbar is about to show over `row`: whether `row_button` shows there (the strip keeps the row
        for the button's click)."""
        return False

"""The small toolbar over the message under the pointer: Copy; Regenerate on the last answer, and "‹ 2/3 ›" there
to flip through the answers Regenerate kept (desktop/session/alternatives.py); Edit on a
question (the last one in its place, an earlier one in a new branch); Branch from here on any message, while no
turn runs; and the buttons features add (`add`: Read aloud). Real buttons (not painted hotspots), so
they take clicks above the text selector."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPoint, QRectF, Signal, SignalInstance
from PySide6.QtWidgets import QAbstractButton, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.conversation.transcript import ChatRow, Kind

STYLE = """
#rowActions { background: palette(base); border: 1px solid palette(midlight); border-radius: 6px; }
#rowActions QToolButton { padding: 1px 6px; }
"""


class RowActions(QFrame):
    copy_requested = Signal(object)  # the ChatRow
    regenerate_requested = Signal(object)
    edit_requested = Signal(object)
    branch_requested = Signal(object)
    answer_requested = Signal(int)  # show that one of the last question's answers (0-based)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("rowActions")
        self.setStyleSheet(STYLE)
        self.row: ChatRow | None = None
        self.copy_button = self._button("Copy", "Copy this message as Markdown", self.copy_requested)
        self.regenerate_button = self._button("↻ Regenerate", "Ask for this answer again, in its place",
                                              self.regenerate_requested)
        self.edit_button = self._button("Edit", "Change this message and send it again", self.edit_requested)
        self.branch_button = self._button("Branch", "A new chat with this conversation up to here; this chat "
                                          "stays as it is", self.branch_requested)
        # (shown, how many) of the last answer's alternatives, as the window last read them; None: it has none
        self.alternatives: Callable[[], tuple[int, int] | None] = lambda: None
        self.previous_button = self._flip("‹", "The answer before this one", -1)
        self.count_label = QLabel(self)
        self.next_button = self._flip("›", "The answer after this one", 1)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(2, 1, 2, 1)
        self._layout.setSpacing(0)
        for widget in (self.previous_button, self.count_label, self.next_button, self.copy_button,
                       self.regenerate_button, self.edit_button, self.branch_button):
            self._layout.addWidget(widget)
        self._added: list[tuple[QAbstractButton, Callable[[ChatRow], bool]]] = []
        self.hide()

    def add(self, button: QAbstractButton, offered: Callable[[ChatRow], bool]) -> None:
        """A feature's button, at the end, shown over the rows for which `offered(row)` is true."""
        button.setParent(self)
        self._layout.addWidget(button)
        self._added.append((button, offered))

    def show_for(self, row: ChatRow, frame: QRectF, latest: bool, idle: bool) -> None:
        """Over `row` (drawn in `frame`, viewport coordinates); `latest`: it belongs to the last turn and
        nothing is running, so it can be redone; `idle`: no turn runs in the chat, so it can be branched."""
        self.row = row
        self.regenerate_button.setVisible(latest and row.kind is Kind.ASSISTANT)
        self.edit_button.setVisible((latest or idle) and row.kind is Kind.USER)
        self.edit_button.setToolTip("Change this message and send it again, in its place" if latest else
                                    "Change this message and send it in a new chat branched here; this chat stays "
                                    "as it is")
        self.branch_button.setVisible(idle)
        counts = self.alternatives() if latest and row.kind is Kind.ASSISTANT else None
        for widget in (self.previous_button, self.count_label, self.next_button):
            widget.setVisible(counts is not None)
        if counts is not None:
            shown, total = counts
            self.count_label.setText(f"{shown + 1}/{total}")
            self.previous_button.setEnabled(shown > 0)
            self.next_button.setEnabled(shown < total - 1)
        for button, offered in self._added:
            button.setVisible(offered(row))
        self.adjustSize()
        if row.kind is Kind.USER:  # left of the bubble (which sits on the right), level with its top
            x, y = frame.left() - self.width() - 6, frame.top()
        else:  # on the answer's bottom edge, at the right, where its text rarely reaches
            x, y = frame.right() - self.width(), frame.bottom() - self.height() / 2
        self.move(QPoint(int(max(0.0, x)), int(max(0.0, y))))
        self.show()
        self.raise_()

    def dismiss(self) -> None:
        self.row = None
        self.hide()

    def _button(self, text: str, tip: str, signal: SignalInstance) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        button.clicked.connect(lambda: signal.emit(self.row) if self.row is not None else None)
        return button

    def _flip(self, text: str, tip: str, step: int) -> QToolButton:
        button = QToolButton(self)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)

        def flip() -> None:
            counts = self.alternatives()
            if self.row is not None and counts is not None:
                self.answer_requested.emit(counts[0] + step)
        button.clicked.connect(flip)
        return button

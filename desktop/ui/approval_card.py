"""Approval questions as small non-modal cards above the composer (chat window, quick prompt).

The core posts a question (desktop/approvals/questions.py) and awaits its answer; a card shows exactly
what would run (the command, or the path and the diff of a write) with Allow once / Always allow / Deny.
Nothing else waits for it: the chat, other chats and the rest of the window stay usable. A question the
core stops waiting for (approvals.timeout) leaves a note saying it was denied."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.approvals import duration
from desktop.kernel.questions import Question, background_key
from desktop.ui.bridge import CoreBridge

STYLE = """
#approvalCard { border: 1px solid palette(highlight); border-radius: 10px; background: palette(base); }
#approvalCard #reason, #approvalCard #origin { color: palette(placeholder-text); }
#approvalCard QPlainTextEdit { border: none; border-radius: 6px; background: palette(alternate-base); }
"""
MAX_CODE_HEIGHT = 220  # pixels; a longer diff scrolls inside the card


class ApprovalCard(QFrame):
    """One question. Answering removes the card; a question closed unanswered turns into a note."""

    def __init__(self, question: Question, origin: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        request = question.request
        self.setObjectName("approvalCard")
        self.setStyleSheet(STYLE)
        self.title = QLabel(f"<b>{request.title}</b>")
        self.reason = QLabel(f"Asking because {request.reason}.")
        self.reason.setObjectName("reason")
        self.reason.setWordWrap(True)
        self.code = QPlainTextEdit(request.shown + (f"\n\n{request.detail}" if request.detail else ""))
        self.code.setReadOnly(True)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if request.detail
                                  else QPlainTextEdit.LineWrapMode.WidgetWidth)
        lines = self.code.toPlainText().count("\n") + 1
        line_height = self.code.fontMetrics().lineSpacing()
        self.code.setFixedHeight(min(MAX_CODE_HEIGHT, line_height * lines + 14))
        self.allow = QPushButton("Allow once")
        self.always = QPushButton("Always allow")
        self.always.setToolTip(request.always[:1].upper() + request.always[1:])
        self.deny = QPushButton("Deny")
        self.allow.clicked.connect(lambda: question.answer("once"))
        self.always.clicked.connect(lambda: question.answer("always"))
        self.deny.clicked.connect(lambda: question.answer("deny"))
        self.dismiss = QPushButton("Dismiss")
        self.dismiss.hide()
        self.dismiss.clicked.connect(self.deleteLater)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.deny, self.always, self.allow, self.dismiss):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        header = QHBoxLayout()
        header.addWidget(self.title, 1)
        if origin:
            source = QLabel(origin)
            source.setObjectName("origin")
            header.addWidget(source)
        layout.addLayout(header)
        layout.addWidget(self.code)
        layout.addWidget(self.reason)
        layout.addLayout(buttons)

    def closed_unanswered(self) -> None:
        """The core stopped waiting: say so instead of offering buttons that would do nothing."""
        for button in (self.allow, self.always, self.deny):
            button.hide()
        if self.question.timed_out:
            self.reason.setText(f"Not answered within {duration(self.question.request.timeout)}, so it was denied.")
        else:
            self.reason.setText("The chat was stopped before an answer; nothing ran.")
        self.dismiss.show()


class ApprovalCards(QWidget):
    """The cards of one place: a chat's own questions, and (in the chat window) those of background work,
    which has no chat of its own to show them in. `changed` fires when cards come or go (to fit the window);
    `focus_freed` when an answered card held the keyboard focus (the window gives it back to its input,
    or Qt would hand it to whatever button comes next)."""

    changed = Signal()
    focus_freed = Signal()

    def __init__(self, bridge: CoreBridge, with_background: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.with_background = with_background
        self.session_key = ""
        self._cards: dict[Question, ApprovalCard] = {}
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 6)
        self._layout.setSpacing(6)
        self.hide()
        self._unsubscribe: Callable[[], None] = bridge.questions.subscribe(self._posted)
        self.destroyed.connect(lambda: self._unsubscribe())

    @property
    def cards(self) -> list[ApprovalCard]:
        return list(self._cards.values())

    def show_session(self, key: str) -> None:
        """Show the questions of chat `key` (and background ones), replacing those of the chat shown before."""
        self.session_key = key
        for question in list(self._cards):
            if not self._mine(question):
                self._drop(question)
        for question in list(self.bridge.questions.pending):
            self._posted(question)

    def _mine(self, question: Question) -> bool:
        key = question.request.session_key
        background = background_key(key)
        return key == self.session_key or (self.with_background and background)

    def _posted(self, question: Question) -> None:
        if question in self._cards or not question.open or not self._mine(question):
            return
        key = question.request.session_key
        origin = "" if key == self.session_key else f"from {self.bridge.session_title(key)}"
        card = ApprovalCard(question, origin, self)
        self._cards[question] = card
        self._layout.addWidget(card)
        self.show()
        question.on_close(self._closed)
        self.changed.emit()

    def _closed(self, question: Question) -> None:
        card = self._cards.get(question)
        if card is None or not isValid(card):  # its window is gone (the app is quitting)
            self._cards.pop(question, None)
            return
        if question.answered is None:
            card.closed_unanswered()
            card.destroyed.connect(lambda: self._forget(question))
            return
        self._drop(question)

    def _drop(self, question: Question) -> None:
        card = self._cards.pop(question, None)
        if card is not None:
            holder = QApplication.focusWidget()
            focused = holder is not None and card.isAncestorOf(holder)
            card.hide()
            card.deleteLater()
            if focused:
                self.focus_freed.emit()
        self.setVisible(bool(self._cards))
        self.changed.emit()

    def _forget(self, question: Question) -> None:
        if self._cards.pop(question, None) is not None:
            self.setVisible(bool(self._cards))
            self.changed.emit()

"""Approval questions as small non-modal cards above the composer (chat window, quick prompt).

The core posts a question through the one door for asking (desktop/kernel/questions.py) and awaits its
answer; a card shows exactly what would run (the command, or the path and the diff of a write, its added and
removed lines tinted as desktop/ui/diff_view.py tints every diff) with Allow once / Always allow / Deny. Nothing
else waits for it: the chat, other chats and the rest of the window stay usable. A background task's question
waits in the chat that started the task, named by the task. A question the core stops waiting for
(approvals.timeout) leaves a note saying it was denied."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QShowEvent
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
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.diff_view import MAX_HEIGHT, diff_tints

STYLE = """
#approvalCard { border: 1px solid palette(highlight); border-radius: 10px; background: palette(base); }
#approvalCard #reason, #approvalCard #origin { color: palette(placeholder-text); }
#approvalCard QPlainTextEdit { border: none; border-radius: 6px; background: palette(alternate-base); }
"""
# What may take a card out of the person's sight without the card itself changing.
SIGHT_EVENTS = (QEvent.Type.Hide, QEvent.Type.WindowStateChange, QEvent.Type.WindowDeactivate)


class ApprovalCard(QFrame):
    """One question. Answering removes the card; a question closed unanswered turns into a note."""

    def __init__(self, question: Question, origin: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = question
        request = question.request
        self.setObjectName("approvalCard")
        self.setStyleSheet(STYLE)
        # bold on purpose; it names the tool, as an MCP server named it: <img src="/a/path"> is words, not a file
        self.title = QLabel(f"<b>{html.escape(request.title)}</b>")
        self.reason = QLabel(f"Asking because {request.reason}.")
        # it quotes the path the model chose: never markup, where <img src="/a/path"> is a file Qt would read
        self.reason.setTextFormat(Qt.TextFormat.PlainText)
        self.reason.setObjectName("reason")
        self.reason.setWordWrap(True)
        self.code = QPlainTextEdit(request.shown + (f"\n\n{request.detail}" if request.detail else ""))
        self.code.setReadOnly(True)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap if request.detail
                                  else QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.code.setExtraSelections(diff_tints(self.code, len(request.shown) + 2) if request.detail else [])
        lines = self.code.toPlainText().count("\n") + 1
        line_height = self.code.fontMetrics().lineSpacing()
        self.code.setFixedHeight(min(MAX_HEIGHT, line_height * lines + 14))
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
        self.origin = QLabel(origin)  # who asks, when not the chat shown (a background task of it)
        self.origin.setTextFormat(Qt.TextFormat.PlainText)  # the task's name, as the model chose it
        self.origin.setObjectName("origin")
        self.origin.setVisible(bool(origin))
        header.addWidget(self.origin)
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


class ApprovalCards(ChatPanel):
    """The cards of one place: a chat's own questions and those of the background tasks it started, and (in the
    chat window, `with_background`) those of the app's own jobs, which have no chat. `changed` fires when cards
    come or go (to fit the window); `sight_changed` when what the person sees of them may have changed (another
    chat shown, the window hidden, minimised or no longer the active one); `focus_freed` (ChatPanel) when an
    answered card held the keyboard focus."""

    changed = Signal()
    sight_changed = Signal()

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
        self.sight_changed.emit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.window().installEventFilter(self)  # once per window: Qt ignores a second install

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.window() and event.type() in SIGHT_EVENTS:
            QTimer.singleShot(0, self.sight_changed.emit)  # once the window's state says what happened
        return False

    def _mine(self, question: Question) -> bool:
        key = question.request.session_key
        conversations = self.bridge.conversations
        if conversations.owner(key) == self.session_key:
            return True
        return self.with_background and background_key(key) and conversations.task_of(key) is None

    def _posted(self, question: Question) -> None:
        if question in self._cards or not question.open or not self._mine(question):
            return
        card = ApprovalCard(question, asked_by(self.bridge, question.request.session_key, self.session_key), self)
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


def asked_by(bridge: CoreBridge, key: str, shown: str = "") -> str:
    """Who asks, for a card shown in chat `shown` or a notification (`shown` empty): a background task by its
    label and its chat's title, another chat or job by its title; nothing for the chat shown itself."""
    task = bridge.conversations.task_of(key)
    if task is not None:
        return f"Background task “{task.label}” · {bridge.session_title(task.origin)}"
    return "" if key == shown else f"from {bridge.session_title(key)}"

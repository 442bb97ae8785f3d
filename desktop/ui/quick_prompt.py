"""The quick prompt: a Spotlight-like popup to ask one thing and read the answer as it streams."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QGuiApplication,
    QKeyEvent,
    QTextBlockFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QLineEdit, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from desktop.bus import ReasoningDelta, TextDelta, ToolStarted, TurnError, TurnFinished, TurnStarted
from desktop.ui.approval_card import ApprovalCards
from desktop.ui.bridge import CoreBridge

DEFAULT_SESSION = "quick:default"
WIDTH = 680
HINT = "Enter to ask  ·  Ctrl+Enter to continue in chat  ·  Esc to close"

STYLE = """
#QuickPrompt { background: palette(window); border: 1px solid palette(mid); border-radius: 0px; }
#QuickPrompt QLineEdit { border: none; background: transparent; padding: 6px 4px; }
#QuickPrompt #glyph { color: palette(highlight); }
#QuickPrompt #question { color: palette(placeholder-text); }
#QuickPrompt QTextBrowser { border: none; background: transparent; }
#QuickPrompt #status { color: palette(placeholder-text); }
#QuickPrompt #status[error="true"] { color: #c0392b; }
#QuickPrompt #rule { color: palette(midlight); }
"""


class QuickPrompt(QWidget):
    """Frameless and always on top. Answers stream inline; the conversation lives in a normal session,
    so "Open in chat" simply shows that session in the chat window."""

    open_in_chat = Signal(str, str)  # session key, and text for the chat window to send there

    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        flags = Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        super().__init__(parent, flags)
        self.bridge = bridge
        self.session_key = DEFAULT_SESSION
        self._busy = False
        self._streamed = ""
        self.setObjectName("QuickPrompt")
        self.setWindowTitle("Quick prompt")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(STYLE)
        self.setFixedWidth(WIDTH)

        glyph = QLabel("✦")
        glyph.setObjectName("glyph")
        glyph.setFont(_scaled(self.font(), 1.5))
        self.input = QLineEdit()
        self.input.setFont(_scaled(self.font(), 1.55))
        self.input.setPlaceholderText("Ask anything…")
        self.input.installEventFilter(self)
        top = QHBoxLayout()
        top.setContentsMargins(14, 8, 14, 8)
        top.setSpacing(8)
        top.addWidget(glyph)
        top.addWidget(self.input, 1)

        self.rule = QFrame()
        self.rule.setObjectName("rule")
        self.rule.setFrameShape(QFrame.Shape.HLine)
        self.question = QLabel()
        self.question.setObjectName("question")
        self.question.setWordWrap(True)
        self.answer = QTextBrowser()
        self.answer.setOpenExternalLinks(True)
        self.answer.setFrameShape(QFrame.Shape.NoFrame)
        self.answer.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.answer.document().setDocumentMargin(0)

        self.status = QLabel(HINT)
        self.status.setObjectName("status")
        self.status.setFont(_scaled(self.font(), 0.9))
        self.open_button = QPushButton("Open in chat")
        self.open_button.setToolTip("Continue this conversation in the chat window (Ctrl+Enter)")
        self.open_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.open_button.clicked.connect(lambda: self.continue_in_chat())
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the answer (what came so far is kept)")
        self.stop_button.clicked.connect(self.stop)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the answer as Markdown")
        self.copy_button.clicked.connect(self.copy_answer)
        footer = QHBoxLayout()
        footer.setContentsMargins(0, 0, 0, 0)
        footer.addWidget(self.status, 1)
        footer.addWidget(self.stop_button)
        footer.addWidget(self.copy_button)
        footer.addWidget(self.open_button)

        body = QVBoxLayout()
        body.setContentsMargins(18, 0, 18, 12)
        body.setSpacing(6)
        body.addWidget(self.question)
        body.addWidget(self.answer)
        self.approvals = ApprovalCards(bridge, with_background=False)  # questions before a tool runs
        self.approvals.show_session(self.session_key)
        self.approvals.changed.connect(self._fit)
        self.approvals.focus_freed.connect(self.input.setFocus)
        body.addWidget(self.approvals)
        body.addLayout(footer)

        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(0)
        self._layout.addLayout(top)
        self._layout.addWidget(self.rule)
        self._layout.addLayout(body)
        self._reset()
        bridge.event.connect(self._on_event)

    # ----- what the app calls
    def popup(self, text: str = "", session_key: str | None = None) -> None:
        """Show centred on the screen under the mouse, optionally pre-filled; `session_key` when opened from a chat."""
        key = session_key or DEFAULT_SESSION
        if key != self.session_key or not self._busy:
            self.session_key = key
            self._busy = False
            self._reset()
            self.approvals.show_session(key)
        if text:
            self.input.setText(text)
        self.input.end(False)
        self._place()
        self.show()
        self.raise_()
        self.activateWindow()
        self.input.setFocus(Qt.FocusReason.PopupFocusReason)

    def submit(self) -> None:
        text = self.input.text().strip()
        if not text:
            return
        self.input.clear()
        self._busy = True
        self._streamed = ""
        self.question.setText(text)
        self.question.show()
        self.answer.clear()
        self.answer.hide()
        self._set_status("Thinking…")
        self.open_button.show()
        self.rule.show()
        self.bridge.send(self.session_key, text)
        self._fit()

    def continue_in_chat(self) -> None:
        """Hand the conversation to the chat window, with what is typed for it to send: sent from there, the
        question shows in its transcript before the answer."""
        text = self.input.text().strip()
        self.input.clear()
        self.hide()
        self.open_in_chat.emit(self.session_key, text)

    def stop(self) -> None:
        if self._busy:
            self.bridge.send(self.session_key, "/stop")
        self.input.setFocus()

    def copy_answer(self) -> None:
        if self._streamed:
            QGuiApplication.clipboard().setText(self._streamed)
            self._set_status("Copied")
        self.input.setFocus()

    # ----- events
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and event.type() == QEvent.Type.KeyPress:
            key_event: QKeyEvent = event  # type: ignore[assignment]
            if key_event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if key_event.modifiers() & Qt.KeyboardModifier.ControlModifier:
                    self.continue_in_chat()
                else:
                    self.submit()
                return True
        return super().eventFilter(watched, event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.hide()
        elif (event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
              and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.continue_in_chat()
        else:
            super().keyPressEvent(event)

    def _on_event(self, event: object) -> None:
        if getattr(event, "session_key", None) != self.session_key:
            return
        if isinstance(event, TurnStarted):
            self._busy = True
            self._set_status("Thinking…")
        elif isinstance(event, TextDelta):
            self._streamed += event.text
            self._show_answer(self._streamed)
            self._set_status("Answering…")
        elif isinstance(event, ReasoningDelta) and not self._streamed:
            self._set_status("Reasoning…")
        elif isinstance(event, ToolStarted):
            self._set_status(f"Using {event.name}…")
        elif isinstance(event, TurnFinished):
            self._busy = False
            if event.content:
                self._streamed = event.content
                self._show_answer(event.content)
            self._set_status("Stopped" if event.stopped else "Done")
        elif isinstance(event, TurnError):
            self._busy = False
            self._set_status(event.message, error=True)

    # ----- look
    def _reset(self) -> None:
        self.input.clear()
        self.question.clear()
        self.question.hide()
        self.answer.clear()
        self.answer.hide()
        self.rule.hide()
        self.open_button.hide()
        self._streamed = ""
        self._set_status(HINT)

    def _show_answer(self, markdown: str) -> None:
        self.answer.setMarkdown(markdown)
        _shade_code_blocks(self.answer.document(), self.palette().alternateBase().color())
        self.answer.show()
        self._fit()

    def _set_status(self, text: str, error: bool = False) -> None:
        self.stop_button.setVisible(self._busy)
        self.copy_button.setVisible(not self._busy and bool(self._streamed))
        self.status.setText(text)
        self.status.setWordWrap(error)
        self.status.setProperty("error", error)
        self.status.style().unpolish(self.status)
        self.status.style().polish(self.status)
        self._fit()

    def _fit(self) -> None:
        """Grow with the answer up to half the screen; the top edge stays put while it streams."""
        if not self.answer.isHidden():
            doc = self.answer.document()
            doc.setTextWidth(self.answer.viewport().width() or WIDTH - 40)
            limit = int(self._screen_rect().height() * 0.5)
            needed = int(doc.size().height()) + 6
            self.answer.setFixedHeight(max(24, min(needed, limit)))
            policy = Qt.ScrollBarPolicy.ScrollBarAsNeeded if needed > limit else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            self.answer.setVerticalScrollBarPolicy(policy)
        self._layout.invalidate()
        self._layout.activate()
        self.resize(WIDTH, self._layout.sizeHint().height())

    def _screen_rect(self) -> QRect:
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def _place(self) -> None:
        self._fit()
        area = self._screen_rect()
        self.move(QPoint(area.center().x() - WIDTH // 2, area.top() + int(area.height() * 0.22)))


def _shade_code_blocks(doc: QTextDocument, colour: QColor) -> None:
    """Markdown import marks fenced code but draws it unshaded; give it a background like a code view."""
    shade = QTextBlockFormat()
    shade.setBackground(colour)
    shade.setLeftMargin(6)
    block = doc.begin()
    while block.isValid():
        if block.blockFormat().hasProperty(QTextFormat.Property.BlockCodeFence):
            QTextCursor(block).mergeBlockFormat(shade)
        block = block.next()


def _scaled(font: QFont, factor: float) -> QFont:
    scaled = QFont(font)
    scaled.setPointSizeF(max(6.0, font.pointSizeF() * factor))
    return scaled

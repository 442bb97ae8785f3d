"""Ctrl+F: find text in the open chat. Matches are counted in the questions and answers (what the
chat shows as messages, as the search over all chats does), highlighted where they are painted, and the
current one is scrolled into view. Enter / Shift+Enter step through them; Esc closes the bar."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAbstractTextDocumentLayout, QColor, QKeyEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from desktop.conversation.transcript import ChatRow, Kind
from desktop.ui.chat.model import TranscriptModel
from desktop.ui.chat.render import RowLayout
from desktop.ui.chat.view import MessageView

SEARCHED = (Kind.USER, Kind.ASSISTANT)
RECOUNT_MS = 150  # while an answer streams in, the count follows it this often at most
MATCH = QColor(255, 224, 102)  # opaque: the same dark ink reads on it in light and dark themes
CURRENT = QColor(255, 150, 40)
INK = QColor(20, 20, 20)

Selection = QAbstractTextDocumentLayout.Selection


class FindBar(QWidget):
    closed = Signal()  # the keyboard goes back to the composer

    def __init__(self, view: MessageView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("findBar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)
        self.setStyleSheet("#findBar { background: palette(base); border-bottom: 1px solid palette(midlight); }")
        self.view = view
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in this chat")
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self.field.textChanged.connect(lambda: self._refresh(jump=True))
        self.count = QLabel()
        self.count.setObjectName("hint")
        self.count.setMinimumWidth(80)
        previous = _button("↑", "Previous match (Shift+Enter)", lambda: self.step(-1))
        following = _button("↓", "Next match (Enter)", lambda: self.step(1))
        close = _button("✕", "Close (Esc)", self.close_bar)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(18, 6, 18, 6)
        layout.setSpacing(6)
        layout.addWidget(self.field, 1)
        layout.addWidget(self.count)
        layout.addWidget(previous)
        layout.addWidget(following)
        layout.addWidget(close)
        self.matches: list[tuple[int, int]] = []  # (row index, which occurrence in that row)
        self.current = -1
        self._model: TranscriptModel | None = None
        self._jump_first = False  # opened for a hit of the all-chats search: go to the chat's first match
        self._recount = QTimer(self, singleShot=True, interval=RECOUNT_MS)
        self._recount.timeout.connect(lambda: self._refresh(jump=self._jump_first))
        view.model_set.connect(self._follow)
        self.hide()

    @property
    def needle(self) -> str:
        return self.field.text().strip().lower()

    def open(self, query: str | None = None, *, first: bool = False) -> None:
        """Show the bar (with `query`, if given) and take the keyboard; `first`: go to the chat's first match,
        once it is loaded."""
        self.show()
        self._follow()
        self._jump_first = first
        if query is not None and query != self.field.text():
            self.field.setText(query)  # searches
        else:
            self._refresh(jump=True)
        self.field.selectAll()
        self.field.setFocus()

    def close_bar(self) -> None:
        self.hide()
        self.view.marks = None
        self.view.viewport().update()
        self.closed.emit()

    def step(self, delta: int) -> None:
        if self.matches:
            start = self.current if self.current >= 0 else (-1 if delta > 0 else 0)
            self._go((start + delta) % len(self.matches))

    # -- matching

    def _follow(self) -> None:
        """Count in the chat now shown, and again whenever its rows change."""
        model = self.view.model()
        if model is self._model:
            return
        if self._model is not None:
            with contextlib.suppress(RuntimeError):  # the chat's rows may be gone already (/new drops them)
                for signal in (self._model.modelReset, self._model.rowsInserted, self._model.dataChanged):
                    signal.disconnect(self._rows_changed)
        self._model = model
        if model is not None:
            for signal in (model.modelReset, model.rowsInserted, model.dataChanged):
                signal.connect(self._rows_changed)
        if self.isVisible():
            self._refresh(jump=True)

    def _rows_changed(self, *_: object) -> None:
        self._recount.start()

    def _refresh(self, *, jump: bool) -> None:
        """Recount; `jump` moves to the first match from the top of the view (or the chat's first) and scrolls
        there, otherwise the current match stays the one it was."""
        if not self.isVisible():
            return
        rows = self._model.rows if self._model is not None else []
        needle = self.needle
        kept = self.matches[self.current] if 0 <= self.current < len(self.matches) else None
        self.matches = [(i, k) for i, row in enumerate(rows) if needle and row.kind in SEARCHED
                        for k in range(row.text.lower().count(needle))]
        self.view.marks = self._marks if needle else None
        if self._jump_first and self._model is not None and self._model.loaded:
            self._jump_first = False
            self._go(0)
        elif jump:
            self._go(next((n for n, (i, _) in enumerate(self.matches) if self.view.row_rect(i).bottom() > 0), 0))
        else:
            self._show_count(self.matches.index(kept) if kept in self.matches
                             else min(self.current, len(self.matches) - 1))
        self.view.viewport().update()

    def _go(self, n: int) -> None:
        """Make match `n` the current one and scroll to it (with no matches, just say so)."""
        self._show_count(n if self.matches else -1)
        if not self.matches:
            return
        index, k = self.matches[n]
        found = self._occurrences(self.view.row_layout(index))
        y = found[k][0] if k < len(found) else 0.0
        self.view.reveal(index, y)

    def _show_count(self, n: int) -> None:
        self.current = n
        if not self.needle:
            self.count.setText("")
        elif not self.matches:
            self.count.setText("No matches")
        elif n < 0:  # matches came in (a chat finished loading) while none was current
            self.count.setText(f"{len(self.matches)} match{'es' if len(self.matches) != 1 else ''}")
        else:
            self.count.setText(f"{n + 1} of {len(self.matches)}")
        self.view.viewport().update()

    # -- painting

    def _occurrences(self, layout: RowLayout) -> list[tuple[float, int, QTextCursor]]:
        """Every painted hit in a row, in reading order: (y in the row, id of its document, cursor)."""
        needle = self.needle
        found = []
        for placed in layout.docs:
            cursor = placed.doc.find(needle)
            while not cursor.isNull():
                block = cursor.block()
                line = block.layout().lineForTextPosition(cursor.selectionStart() - block.position())
                top = placed.doc.documentLayout().blockBoundingRect(block).top()
                found.append((placed.pos.y() + top + (line.y() if line.isValid() else 0.0), id(placed.doc), cursor))
                cursor = placed.doc.find(needle, cursor)
        return found

    def _marks(self, row: ChatRow, layout: RowLayout) -> dict[int, list[Selection]] | None:
        """The highlights of one row being painted: every hit, the current one stronger."""
        if row.kind not in SEARCHED or self.needle not in row.text.lower():
            return None
        rows = self._model.rows if self._model is not None else []
        index, nth = self.matches[self.current] if 0 <= self.current < len(self.matches) else (-1, -1)
        if not (0 <= index < len(rows) and rows[index] is row):
            nth = -1
        marks: dict[int, list[Selection]] = {}
        for k, (_, doc, cursor) in enumerate(self._occurrences(layout)):
            selection = Selection()
            selection.cursor = cursor
            selection.format = QTextCharFormat()
            selection.format.setBackground(CURRENT if k == nth else MATCH)
            selection.format.setForeground(INK)  # dark on yellow in dark themes too
            marks.setdefault(doc, []).append(selection)
        return marks

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.field and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self.step(-1 if event.modifiers() & Qt.KeyboardModifier.ShiftModifier else 1)
                return True
            if event.key() == Qt.Key.Key_Escape:
                self.close_bar()
                return True
        return super().eventFilter(watched, event)


def _button(text: str, tip: str, clicked: Callable[[], None]) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    button.clicked.connect(clicked)
    return button

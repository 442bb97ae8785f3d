"""Ctrl+K: search every chat, titles and messages, from a small panel over the chat window.

Each keystroke starts a new search in the core (a worker thread reads the session files) and calls off
the one before, so a slow scan never shows stale results. Arrow keys move through the list, Enter opens
the chat; for a hit in its messages the chat opens at that message with the find bar set to the query."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QFocusEvent, QFont, QFontMetrics, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGraphicsDropShadowEffect,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.taskset import TaskSet
from desktop.session.search import ChatHit
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.sidebar import ago
from desktop.ui.markdown import mix

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
NEEDLE_ROLE = Qt.ItemDataRole.UserRole + 2
WIDTH = 560
ROWS_SHOWN = 8
NO_MATCH = "No chat matches"


class SearchAll(QFrame):
    chosen = Signal(str, str)  # session key, and the query to find in it ("" when only its title matched)
    dismissed = Signal()       # closed without a choice: the keyboard goes back to the composer

    def __init__(self, bridge: CoreBridge, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("searchAll")
        self.setStyleSheet("#searchAll { background: palette(base); border: 1px solid palette(mid);"
                           " border-radius: 10px; }")
        shadow = QGraphicsDropShadowEffect(self)
        shadow.setBlurRadius(24)
        shadow.setOffset(0, 4)
        shadow.setColor(QColor(0, 0, 0, 110))
        self.setGraphicsEffect(shadow)
        self._bridge = bridge
        self._window = parent
        self._searches = TaskSet("chat search")
        self._task: asyncio.Future[None] | None = None  # the search whose results the list will show
        self._choose_when_found = False  # Enter came before the results
        self.field = QLineEdit()
        self.field.setPlaceholderText("Search all chats")
        self.field.setClearButtonEnabled(True)
        self.field.installEventFilter(self)
        self.field.textChanged.connect(self._search)
        self.results = QListWidget()
        self.results.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keyboard stays in the field; arrows move here
        self.results.setFrameShape(QFrame.Shape.NoFrame)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setItemDelegate(_HitDelegate(self.results))
        self.results.itemClicked.connect(self._choose)
        self.status = QLabel()
        self.status.setObjectName("hint")
        self.status.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.status.hide()  # until a search has found nothing
        self.results.hide()  # until a search has found something
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 10, 10, 10)
        layout.setSpacing(6)
        layout.addWidget(self.field)
        layout.addWidget(self.status)
        layout.addWidget(self.results)
        parent.installEventFilter(self)  # follow the window's size
        self.hide()

    def open(self, text: str = "") -> None:
        """Show the panel (Ctrl+K, or the sidebar's search field with what was typed there)."""
        self._choose_when_found = False
        self._place()
        self.show()
        self.raise_()
        if text:
            self.field.setText(text)
        else:
            self.field.selectAll()
        self.field.setFocus()
        self._search()

    def dismiss(self) -> None:
        self._close()
        self.dismissed.emit()

    def _close(self) -> None:
        self.hide()
        if self._task is not None:
            self._task.cancel()

    # -- searching

    def _search(self) -> None:
        """Call off the running search; start one for the field's text."""
        if self._task is not None:
            self._task.cancel()
        if self.isVisible():
            self._task = self._searches.spawn(self._run(self.field.text()))

    async def _run(self, query: str) -> None:
        hits = await self._bridge.search_chats(query)
        needle = query.strip().lower()
        self.results.clear()
        for hit in hits:
            item = QListWidgetItem(hit.title)
            item.setData(HIT_ROLE, hit)
            item.setData(NEEDLE_ROLE, needle)
            self.results.addItem(item)
        if hits:
            self.results.setCurrentRow(0)
        self.status.setText("" if hits else NO_MATCH if needle else "No saved chats yet")
        self.status.setVisible(not hits)
        self.results.setVisible(bool(hits))
        self._fit()
        if self._choose_when_found:
            self._choose_when_found = False
            self._choose()

    def _choose(self, item: QListWidgetItem | None = None) -> None:
        item = item or self.results.currentItem()
        if item is None:
            return
        hit: ChatHit = item.data(HIT_ROLE)
        self._close()
        self.chosen.emit(hit.key, self.field.text().strip() if hit.message >= 0 else "")

    # -- geometry and keys

    def _place(self) -> None:
        width = min(WIDTH, self._window.width() - 40)
        self.setFixedWidth(width)
        self.move((self._window.width() - width) // 2, 56)

    def _fit(self) -> None:
        shown = min(self.results.count(), ROWS_SHOWN)
        row = self.results.sizeHintForRow(0) if shown else 0
        self.results.setFixedHeight(row * shown + 4)
        self.adjustSize()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self._window and kind == QEvent.Type.Resize and self.isVisible():
            self._place()
        elif watched is self.field and kind == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(event)
        elif watched is self.field and kind == QEvent.Type.FocusOut and isinstance(event, QFocusEvent):
            if event.reason() not in (Qt.FocusReason.ActiveWindowFocusReason, Qt.FocusReason.PopupFocusReason):
                self._close()  # clicked elsewhere in the window: what was clicked keeps the keyboard
        return super().eventFilter(watched, event)

    def _key(self, event: QKeyEvent) -> bool:
        key = event.key()
        moves: dict[int, int] = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1, Qt.Key.Key_PageDown: ROWS_SHOWN,
                 Qt.Key.Key_PageUp: -ROWS_SHOWN}
        if key in moves and self.results.count():
            row = min(max(self.results.currentRow() + moves[key], 0), self.results.count() - 1)
            self.results.setCurrentRow(row)
            return True
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            if self._task is not None and not self._task.done():
                self._choose_when_found = True  # typed fast: the list still shows the previous query's chats
            else:
                self._choose()
            return True
        if key == Qt.Key.Key_Escape:
            self.dismiss()
            return True
        return False


class _HitDelegate(QStyledItemDelegate):
    """Two lines per chat: its title and when it was last active, then the message around the hit with the
    hit in bold (the text before it shortened first, so the hit always shows)."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(200, int(QFontMetrics(option.font).lineSpacing() * 2.3 + 14))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        hit: ChatHit = index.data(HIT_ROLE)
        palette = opt.palette
        base, text = palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text)
        muted = mix(text, base, 0.45)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if opt.state & QStyle.StateFlag.State_Selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(mix(base, palette.color(QPalette.ColorRole.Highlight), 0.2))
            painter.drawRoundedRect(QRectF(opt.rect).adjusted(1, 1, -1, -1), 7, 7)
        inner = opt.rect.adjusted(10, 6, -10, -6)
        bold = QFont(opt.font)
        bold.setWeight(QFont.Weight.DemiBold)
        small = QFont(opt.font)
        small.setPointSizeF(max(opt.font.pointSizeF() - 1, 7.0))
        line = QFontMetrics(opt.font).lineSpacing()
        top = QRect(inner.x(), inner.y(), inner.width(), line)
        second = QRect(inner.x(), inner.y() + line + 4, inner.width(), line)
        left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        when = ago(hit.updated_at)
        painter.setFont(small)
        painter.setPen(muted)
        painter.drawText(top, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), when)
        room = inner.width() - QFontMetrics(small).horizontalAdvance(when) - 16
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(top, left, QFontMetrics(bold).elidedText(hit.title, Qt.TextElideMode.ElideRight, room))
        if hit.snippet:
            more = f"  +{hit.matches - 1} more" if hit.matches > 1 else ""
            room = inner.width() - QFontMetrics(small).horizontalAdvance(more)
            _draw_hit(painter, QRect(second.x(), second.y(), room, line), hit.snippet, index.data(NEEDLE_ROLE),
                      opt.font, bold)
            painter.setFont(small)
            painter.setPen(muted)
            painter.drawText(second, int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter), more)
        else:
            painter.setFont(small)
            painter.setPen(muted)
            painter.drawText(second, left, "Title matches" if index.data(NEEDLE_ROLE) else hit.key)
        painter.restore()


def _draw_hit(painter: QPainter, rect: QRect, snippet: str, needle: str, font: QFont, bold: QFont) -> None:
    """One line: the snippet with the hit in bold, shortened on the left first so the hit stays in sight."""
    at = snippet.lower().find(needle) if needle else -1
    plain, strong = QFontMetrics(font), QFontMetrics(bold)
    left = int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    painter.setFont(font)
    if at == -1:
        painter.drawText(rect, left, plain.elidedText(snippet, Qt.TextElideMode.ElideRight, rect.width()))
        return
    before, match, after = snippet[:at], snippet[at:at + len(needle)], snippet[at + len(needle):]
    match_width = min(strong.horizontalAdvance(match), rect.width())
    before_room = max(rect.width() - match_width - plain.horizontalAdvance(after), rect.width() // 3)
    before = plain.elidedText(before, Qt.TextElideMode.ElideLeft, min(before_room, rect.width() - match_width))
    x = rect.x()
    painter.drawText(QRect(x, rect.y(), rect.width(), rect.height()), left, before)
    x += plain.horizontalAdvance(before)
    painter.setFont(bold)
    painter.drawText(QRect(x, rect.y(), rect.right() - x, rect.height()), left,
                     strong.elidedText(match, Qt.TextElideMode.ElideRight, rect.right() - x))
    x += match_width
    painter.setFont(font)
    painter.drawText(QRect(x, rect.y(), max(rect.right() - x, 0), rect.height()), left,
                     plain.elidedText(after, Qt.TextElideMode.ElideRight, max(rect.right() - x, 0)))

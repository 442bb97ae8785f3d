"""The list of chats beside the transcript: a search field (the door to Ctrl+K's search of every chat), new,
switch, pin (kept at the top), rename in place (F2 or the menu), delete after a confirmation that never blocks
the event loop (QMessageBox.open, not exec). Chats are grouped under headers by when they were last active;
quick-prompt chats carry the quick prompt's ✦. A branch is listed right under the chat it branched from, indented,
whenever that chat is listed too."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from textwrap import shorten

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QMouseEvent, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.channels import Channel, channel_of
from desktop.session.session import SessionInfo
from desktop.ui.markdown import mix
from desktop.ui.plain_text import plain_box, plain_tip

KEY_ROLE = Qt.ItemDataRole.UserRole + 1
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 2
HEADER_ROLE = Qt.ItemDataRole.UserRole + 3  # a group's header row (not a chat)
PINNED_ROLE = Qt.ItemDataRole.UserRole + 4
DEPTH_ROLE = Qt.ItemDataRole.UserRole + 5  # how many branches deep: 0 for a chat of its own
TITLE_ROLE = Qt.ItemDataRole.UserRole + 6  # the name the chat has: what a rename left blank shows again
INDENT = 14  # px per level of branching
BRANCH_MARK = "↳"
NEW_TITLE = "New chat"
PINNED = "Pinned"
GROUPS = ("Today", "Yesterday", "Previous 7 days", "Older")
QUICK_MARK = "✦"  # the quick prompt's glyph, before the titles of chats asked there
NEEDS_ANSWER = "Needs your answer"
FOCUS_RING = 1.5  # px: where the keyboard is, in the list and on New chat, in light and dark palettes alike
STYLE = """
#newChat { border: 2px solid transparent; }
#newChat:focus { border-color: palette(highlight); }
#searchChats { border: 1px solid palette(midlight); border-radius: 7px; padding: 5px 8px; background: palette(base); }
"""


class _SessionDelegate(QStyledItemDelegate):
    """Two lines per chat: the title, then when it was active and how long it is.

    Which chats are busy, and which wait for the person's answer, is kept here, not on the items: setting any
    data on an item resets an open rename editor to the item's text, so a turn ending while the person types a
    new title would throw their typing away (and the Return they pressed would commit the old title)."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.busy: set[str] = set()
        self.asking: set[str] = set()  # a question waits in these chats: "Needs your answer" instead of the dot

    def detail(self, index: QModelIndex | QPersistentModelIndex) -> str:
        """The second line: "Needs your answer" while a question waits, else when it was active and its length."""
        return NEEDS_ANSWER if index.data(KEY_ROLE) in self.asking else str(index.data(DETAIL_ROLE) or "")

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        metrics = QFontMetrics(option.font)
        if index.data(HEADER_ROLE):
            return QSize(200, int(metrics.lineSpacing() + 14))
        return QSize(200, int(metrics.lineSpacing() * 2.4 + 14))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        if index.data(HEADER_ROLE):
            self._paint_header(painter, option, str(index.data(HEADER_ROLE)))
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        palette = opt.palette
        window, text_color = palette.color(QPalette.ColorRole.Window), palette.color(QPalette.ColorRole.Text)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        hovered = bool(opt.state & QStyle.StateFlag.State_MouseOver)
        focused = bool(opt.state & QStyle.StateFlag.State_HasFocus)  # the list has the keyboard: arrows move this
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = palette.color(QPalette.ColorRole.Highlight)
        if selected or hovered or focused:
            painter.setPen(QPen(accent, FOCUS_RING) if focused else Qt.PenStyle.NoPen)
            painter.setBrush(mix(window, accent, 0.2) if selected else
                             mix(window, text_color, 0.06) if hovered else Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(QRectF(opt.rect).adjusted(2.5, 1.5, -2.5, -1.5), 7, 7)
        depth = int(index.data(DEPTH_ROLE) or 0)
        rect = opt.rect.adjusted(12 + INDENT * depth, 7, -10, -7)
        title_font = QFont(opt.font)
        title_font.setWeight(QFont.Weight.DemiBold if selected else QFont.Weight.Normal)
        small = QFont(opt.font)
        small.setPointSizeF(max(opt.font.pointSizeF() - 1, 7.0))
        metrics = QFontMetrics(title_font)
        line = metrics.lineSpacing()
        asking = index.data(KEY_ROLE) in self.asking
        busy = index.data(KEY_ROLE) in self.busy and not asking
        painter.setFont(title_font)
        if depth:  # a branch: hooked under the chat above it
            painter.setPen(mix(text_color, window, 0.45))
            mark = metrics.horizontalAdvance(BRANCH_MARK) + 5
            painter.drawText(QRect(rect.x(), rect.y(), mark, line),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), BRANCH_MARK)
            rect.setLeft(rect.x() + mark)
        if channel_of(str(index.data(KEY_ROLE))) is Channel.QUICK:  # asked in the quick prompt
            painter.setPen(accent)
            mark = metrics.horizontalAdvance(QUICK_MARK) + 5
            painter.drawText(QRect(rect.x(), rect.y(), mark, line),
                             int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), QUICK_MARK)
            rect.setLeft(rect.x() + mark)
        painter.setPen(text_color)
        title_rect = QRect(rect.x(), rect.y(), rect.width() - (14 if busy else 0), line)
        painter.drawText(title_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         metrics.elidedText(opt.text, Qt.TextElideMode.ElideRight, title_rect.width()))
        if busy:  # a turn is running in this chat
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(palette.color(QPalette.ColorRole.Highlight))
            painter.drawEllipse(QPoint(rect.right() - 4, rect.y() + line // 2), 4, 4)
        if asking:  # the person is wanted here: said in words, in the accent colour, on the second line
            small.setWeight(QFont.Weight.DemiBold)
        painter.setFont(small)
        painter.setPen(accent if asking else mix(text_color, window, 0.45))
        detail_rect = QRect(rect.x(), rect.y() + line + 2, rect.width(), rect.height() - line - 2)
        painter.drawText(detail_rect, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop),
                         QFontMetrics(small).elidedText(self.detail(index), Qt.TextElideMode.ElideRight,
                                                        detail_rect.width()))
        painter.restore()

    def _paint_header(self, painter: QPainter, option: QStyleOptionViewItem, text: str) -> None:
        small = QFont(option.font)
        small.setPointSizeF(max(option.font.pointSizeF() - 1, 7.0))
        small.setWeight(QFont.Weight.DemiBold)
        palette = option.palette
        painter.save()
        painter.setFont(small)
        painter.setPen(mix(palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Window), 0.45))
        painter.drawText(option.rect.adjusted(12, 6, -10, -2),
                         int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom), text)
        painter.restore()

    def updateEditorGeometry(self, editor: QWidget, option: QStyleOptionViewItem,
                             index: QModelIndex | QPersistentModelIndex) -> None:
        rect = option.rect.adjusted(6, 4, -6, 0)
        rect.setHeight(QFontMetrics(option.font).lineSpacing() + 10)
        editor.setGeometry(rect)


class _List(QListWidget):
    rename_key = Signal()
    delete_key = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_F2:
            self.rename_key.emit()
        elif event.key() == Qt.Key.Key_Delete:
            self.delete_key.emit()
        else:
            super().keyPressEvent(event)


class _SearchField(QLineEdit):
    """Where people look for search: a click, or typing, opens the search over every chat (Ctrl+K) with what was
    typed, so there is one search, and this field never holds text of its own."""

    opened = Signal(str)  # what was typed so far

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("searchChats")
        self.setPlaceholderText("Search chats  (Ctrl+K)")
        self.setToolTip("Search every chat, titles and messages (Ctrl+K)")
        self.textEdited.connect(self._typed)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.opened.emit("")

    def _typed(self, text: str) -> None:
        self.clear()
        self.opened.emit(text)


class SessionList(QWidget):
    selected = Signal(str)
    new_requested = Signal()
    rename_requested = Signal(str, str)  # key, new title
    delete_requested = Signal(str)       # confirmed by the user
    pin_requested = Signal(str, bool)    # key, pinned

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.delete_box: QMessageBox | None = None
        self.unsent_edit: Callable[[str], str] = lambda key: ""  # a chat's rewritten question not sent (the window's)
        self.new_button = QPushButton("+  New chat", self)
        self.new_button.setObjectName("newChat")
        self.setStyleSheet(STYLE)
        self.new_button.setToolTip("Start a new chat (Ctrl+N)")
        self.new_button.clicked.connect(self.new_requested)
        self.search_field = _SearchField(self)
        self.list = _List(self)
        self.delegate = _SessionDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.viewport().setBackgroundRole(QPalette.ColorRole.Window)
        self.list.setMouseTracking(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.list.currentItemChanged.connect(self._current_changed)
        self.list.itemChanged.connect(self._edited)
        self.list.rename_key.connect(lambda: self.start_rename(self.current_key()))
        self.list.delete_key.connect(lambda: self.confirm_delete(self.current_key()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 10, 4, 8)
        layout.setSpacing(8)
        layout.addWidget(self.new_button)
        layout.addWidget(self.search_field)
        layout.addWidget(self.list, 1)

    def session_keys(self) -> list[str]:
        """The chats in the order shown (pinned first, then by group), not the group headers."""
        keys = (self.list.item(i).data(KEY_ROLE) for i in range(self.list.count()))
        return [key for key in keys if key]

    def headers(self) -> list[str]:
        return [h for h in (self.list.item(i).data(HEADER_ROLE) for i in range(self.list.count())) if h]

    def title_of(self, key: str) -> str:
        item = self._item(key)
        return item.text() if item is not None else ""

    def current_key(self) -> str:
        item = self.list.currentItem()
        return item.data(KEY_ROLE) if item is not None else ""

    def set_sessions(self, infos: list[SessionInfo], current: str, busy: set[str]) -> None:
        """Show the saved chats (most recent first); the current one is kept even before it is saved."""
        if self.list.state() == QAbstractItemView.State.EditingState:
            return  # do not pull the list from under an open rename editor
        if current and all(info.key != current for info in infos):
            infos = [SessionInfo(current, NEW_TITLE, datetime.now().astimezone().isoformat(), 0), *infos]
        self.delegate.busy = set(busy)
        self.list.blockSignals(True)
        self.list.clear()
        today = datetime.now().astimezone().date()
        heading = ""
        titles = {info.key: info.title for info in infos}
        for info, depth in under_parents(sorted(infos, key=lambda i: not i.pinned)):  # stable: by time within each
            group = PINNED if info.pinned else group_of(info.updated_at, today)
            if group != heading and not depth:
                heading = group
                header = QListWidgetItem()
                header.setData(HEADER_ROLE, group)
                header.setFlags(Qt.ItemFlag.NoItemFlags)  # not selectable, skipped by the arrow keys
                self.list.addItem(header)
            item = QListWidgetItem(info.title)
            item.setData(KEY_ROLE, info.key)
            item.setData(DETAIL_ROLE, ("Branch · " if depth else "") + _detail(info))
            item.setData(PINNED_ROLE, info.pinned)
            item.setData(DEPTH_ROLE, depth)
            item.setData(TITLE_ROLE, info.title)
            quick = channel_of(info.key) is Channel.QUICK
            item.setToolTip(plain_tip(  # a title may be the model's words (a reminder's name)
                f"{QUICK_MARK} Asked in the quick prompt: {info.title}" if quick else
                f"{info.title}\nBranch of “{titles[info.branch_of]}”" if depth else info.title))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            self.list.addItem(item)
            if info.key == current:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)

    def set_busy(self, key: str, busy: bool) -> None:
        if busy:
            self.delegate.busy.add(key)
        else:
            self.delegate.busy.discard(key)
        self.list.viewport().update()

    def set_asking(self, keys: set[str]) -> None:
        """The chats where a question waits for the person's answer."""
        if keys != self.delegate.asking:
            self.delegate.asking = set(keys)
            self.list.viewport().update()

    def select(self, key: str) -> None:
        item = self._item(key)
        if item is not None:
            self.list.blockSignals(True)
            self.list.setCurrentItem(item)
            self.list.blockSignals(False)

    def start_rename(self, key: str) -> None:
        item = self._item(key)
        if item is not None:
            self.list.setCurrentItem(item)
            self.list.editItem(item)

    def confirm_delete(self, key: str) -> None:
        item = self._item(key)
        if item is None:
            return
        words = shorten(self.unsent_edit(key), 80, placeholder="…")  # not among its messages: said, or it goes unseen
        unsent = (f"\n\nYour rewritten question in it, not sent yet, goes too: “{words}”. To keep it, cancel and send "
                  "it from that chat.")
        box = plain_box(QMessageBox.Icon.Question, "Delete chat",  # the title may be a reminder's, the model's words
                        f"Delete “{item.text()}”?\nIts messages are removed from disk; this cannot be undone."
                        + (unsent if words else ""),
                        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Delete")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.setWindowModality(Qt.WindowModality.WindowModal)

        def finished() -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                self.delete_requested.emit(key)
            box.deleteLater()
            if self.delete_box is box:
                self.delete_box = None

        box.finished.connect(finished)
        self.delete_box = box
        box.open()

    def _item(self, key: str) -> QListWidgetItem | None:
        return next((self.list.item(i) for i in range(self.list.count()) if self.list.item(i).data(KEY_ROLE) == key),
                    None)

    def _current_changed(self, item: QListWidgetItem | None) -> None:
        if item is not None:
            self.selected.emit(item.data(KEY_ROLE))

    def _edited(self, item: QListWidgetItem) -> None:
        title = " ".join(item.text().split())
        if title:
            self.rename_requested.emit(item.data(KEY_ROLE), title)
        else:  # a chat has a name: a blank one is no rename
            self.list.blockSignals(True)
            item.setText(item.data(TITLE_ROLE))
            self.list.blockSignals(False)

    def _menu(self, pos: QPoint) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        key = item.data(KEY_ROLE)
        if not key:
            return  # a group's header
        pinned = bool(item.data(PINNED_ROLE))
        menu = QMenu(self)
        menu.addAction("Unpin" if pinned else "Pin to the top", lambda: self.pin_requested.emit(key, not pinned))
        menu.addAction("Rename", lambda: self.start_rename(key))
        menu.addAction("Delete…", lambda: self.confirm_delete(key))
        menu.popup(self.list.viewport().mapToGlobal(pos))


def under_parents(infos: list[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """`infos` in their order, each branch moved right under the chat it branched from (newest branch first),
    with how deep it is; a branch whose parent is not listed stays where it was, as a chat of its own, and so
    does a pinned branch of a chat that is not pinned (pinned chats stay at the top)."""
    listed = {info.key: info for info in infos}

    def nested(info: SessionInfo) -> bool:
        parent = listed.get(info.branch_of)
        return parent is not None and parent is not info and (parent.pinned or not info.pinned)

    branches: dict[str, list[SessionInfo]] = {}
    for info in infos:
        if nested(info):
            branches.setdefault(info.branch_of, []).append(info)
    ordered: list[tuple[SessionInfo, int]] = []
    placed: set[str] = set()

    def place(info: SessionInfo, depth: int) -> None:
        if info.key in placed:
            return
        placed.add(info.key)
        ordered.append((info, depth))
        for branch in branches.get(info.key, []):
            place(branch, depth + 1)

    for info in infos:
        if not nested(info):
            place(info, 0)
    for info in infos:  # branches of each other, in a circle: listed anyway
        place(info, 0)
    return ordered


def group_of(stamp: str, today: date) -> str:
    """The date group a chat last active at `stamp` is listed under (Older when the time is unknown)."""
    try:
        then = datetime.fromisoformat(stamp).astimezone().date()
    except ValueError:
        return GROUPS[-1]
    days = (today - then).days
    if days <= 0:
        return GROUPS[0]
    if days == 1:
        return GROUPS[1]
    return GROUPS[2] if days < 7 else GROUPS[3]


def _detail(info: SessionInfo) -> str:
    count = f"{info.message_count} message{'s' if info.message_count != 1 else ''}"
    return f"{ago(info.updated_at)} · {count}" if info.updated_at else count


def ago(stamp: str) -> str:
    """When a chat was last active, as a person says it ("5 min ago", "yesterday")."""
    try:
        then = datetime.fromisoformat(stamp)
    except ValueError:
        return ""
    now = datetime.now(then.tzinfo)
    seconds = (now - then).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400 and then.date() == now.date():
        return then.strftime("%H:%M")
    if (now.date() - then.date()).days == 1:
        return "yesterday"
    return then.strftime("%d %b %Y" if then.year != now.year else "%d %b")

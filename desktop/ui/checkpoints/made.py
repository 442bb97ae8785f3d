"""What the agent made: a column beside the transcript, toggled by "Files" in the chat's header, listing the
files the open chat's turns created or changed (newest first, from the Checkpoints service), with a preview of
the one picked (preview.py) and what can be done with it: Open it with the desktop's default app, Show in
folder, or Attach to my next message (a chip in the message box, as a dropped file).

Open is refused for anything the desktop could run instead of show (a launcher, a script, a program, a file
marked executable, a link), asked again of the file as it is when clicked; the column says why and Show in
folder stays. The list follows the core's FilesChanged and ChangesUndone events."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.checkpoints import Checkpoints
from desktop.checkpoints.events import ChangesUndone, FilesChanged
from desktop.kernel.bus import ChatSetAside, Event
from desktop.kernel.taskset import spawn
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.checkpoints.preview import FilePreview
from desktop.ui.plain_text import plain_tip

STYLE = """
#madeSide { border-left: 1px solid palette(midlight); background: palette(window); }
#madeHeading { font-weight: 600; }
#madeNote, #madeEmpty, #madeRefused { color: palette(placeholder-text); }
#madeSide QListWidget::item { padding: 3px 4px; border-bottom: 1px solid palette(midlight); }
#madeSide QListWidget::item:selected { background: palette(highlight); color: palette(highlighted-text); }
"""
SIDE_WIDTH = 340  # pixels the column takes when it first opens; then the width the person left it at
_VERBS = {"created": "new", "modified": "changed"}


class MadeSide(QFrame):
    """The column: the list, the preview, the three actions."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("madeSide")
        self.setStyleSheet(STYLE)
        self.setMinimumWidth(240)
        self.heading = QLabel("Made in this chat")
        self.heading.setObjectName("madeHeading")
        self.empty = QLabel("Files this chat's turns create or change show here.")
        self.empty.setObjectName("madeEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.files = QListWidget()
        self.files.setMaximumHeight(180)
        # A row as wide as the column, its lines shortened in the middle (a path keeps its file's name), the whole
        # of it in its tooltip: never a sideways scrollbar.
        self.files.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.files.setItemDelegate(_ColumnWide(self.files))
        self.preview = FilePreview()
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Open with the desktop's app for this kind of file")
        self.folder_button = QPushButton("Show in folder")
        self.attach_button = QPushButton("Attach to my next message")
        self.refused = QLabel()  # why Open is off for this file
        self.refused.setTextFormat(Qt.TextFormat.PlainText)  # it names a file a command made: never markup
        self.refused.setObjectName("madeRefused")
        self.refused.setWordWrap(True)
        self.refused.hide()
        actions = QHBoxLayout()
        actions.addWidget(self.open_button)
        actions.addWidget(self.folder_button)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        layout.addWidget(self.heading)
        layout.addWidget(self.empty, 1)  # with nothing listed it takes the room, its text under the heading
        layout.addWidget(self.files)
        layout.addWidget(self.preview, 1)
        layout.addLayout(actions)
        layout.addWidget(self.attach_button)
        layout.addWidget(self.refused)


class _ColumnWide(QStyledItemDelegate):
    """Rows no wider than the list: the list lays rows out at their text's width, which would run past the
    column's edge instead of shortening the text."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:  # noqa: N802
        return QSize(0, super().sizeHint(option, index).height())


class MadePanel(ChatPanel):
    """No strip of its own above the composer: its toggle goes in the header, its column beside the chat."""

    def __init__(self, checkpoints: Checkpoints, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checkpoints = checkpoints
        self.bridge = bridge
        self.session_key = ""
        self.width_kept = SIDE_WIDTH  # the column's width: the same in every chat, as the person last left it
        self._splitter: QSplitter | None = None
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl  # what Open and Show in folder call
        self.toggle = QToolButton()
        self.toggle.setText("Files")
        self.toggle.setToolTip("What the agent made in this chat: the files its turns created or changed")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.toggled.connect(self._show_side)
        self.side = MadeSide()
        side = self.side
        side.files.currentItemChanged.connect(lambda item, _old: self._pick(item))
        side.open_button.clicked.connect(lambda: spawn(self.open_file()))
        side.folder_button.clicked.connect(lambda: spawn(self.show_in_folder()))
        side.attach_button.clicked.connect(self.attach)
        bridge.event.connect(self._on_event)
        self._pick(None)
        self.hide()

    def header_widget(self) -> QWidget:
        return self.toggle

    def side_widget(self) -> QWidget:
        return self.side

    def show_session(self, key: str) -> None:
        self.session_key = key
        self.refresh()

    @property
    def picked(self) -> str | None:
        item = self.side.files.currentItem()
        return None if item is None else str(item.data(Qt.ItemDataRole.UserRole))

    def refresh(self) -> None:
        """The list as the journal has it now, keeping the file picked if it is still there."""
        files = self.side.files
        picked = self.picked
        made = self.checkpoints.made(self.session_key) if self.session_key else []
        files.blockSignals(True)
        files.clear()
        for entry in made:
            text = f"{entry.path}\n{_VERBS[entry.verb]} · by “{entry.label}”"
            item = QListWidgetItem(text)
            item.setData(Qt.ItemDataRole.UserRole, entry.path)
            item.setToolTip(plain_tip(text))  # the whole name, as a command chose it
            files.addItem(item)
        files.blockSignals(False)
        self.side.empty.setVisible(not made)
        files.setVisible(bool(made))
        paths = [entry.path for entry in made]
        if picked in paths:
            files.setCurrentRow(paths.index(picked))
        elif made:
            files.setCurrentRow(0)
        else:
            self._pick(None)

    def _pick(self, item: QListWidgetItem | None) -> None:
        side = self.side
        side.refused.hide()
        side.preview.setVisible(item is not None)
        for button in (side.open_button, side.folder_button, side.attach_button):
            button.setEnabled(False)
        if item is not None:
            spawn(self._load(str(item.data(Qt.ItemDataRole.UserRole))))

    async def _load(self, path: str) -> None:
        preview = await self.checkpoints.preview(path)
        if not isValid(self) or self.picked != path:
            return
        await self.side.preview.show_preview(preview)
        side = self.side
        side.folder_button.setEnabled(True)
        side.attach_button.setEnabled(preview.readable)
        side.open_button.setEnabled(not preview.runs)
        self._say_refused(path, preview.runs if preview.readable else "")

    async def open_file(self) -> None:
        path = self.picked
        if path is None:
            return
        why = await self.checkpoints.open_refusal(path)  # the file as it is now, not as previewed
        if why:
            self.side.open_button.setEnabled(False)
            self._say_refused(path, why)
            return
        self.open_url(QUrl.fromLocalFile(str(self.bridge.workspace / path)))

    async def show_in_folder(self) -> None:
        path = self.picked
        if path is None:
            return
        folder = await self.checkpoints.folder_of(path)
        if folder is None:
            self._say_refused(path, "", f"The folder of {PurePosixPath(path).name} cannot be shown: it is no "
                                        "longer a folder in the workspace.")
            return
        self.open_url(QUrl.fromLocalFile(str(folder)))

    def attach(self) -> None:
        path = self.picked
        if path is not None:
            self.attach_requested.emit([str(self.bridge.workspace / path)])

    def _say_refused(self, path: str, why: str, text: str = "") -> None:
        name = PurePosixPath(path).name
        said = text or (f"Open is off for {name}: {why}. Show in folder lets you look at it." if why else "")
        self.side.refused.setText(said)
        self.side.refused.setVisible(bool(said))

    def _show_side(self, on: bool) -> None:
        side = self.side
        side.setVisible(on)
        splitter = side.parentWidget()
        if on and isinstance(splitter, QSplitter):
            if self._splitter is not splitter:
                self._splitter = splitter
                splitter.splitterMoved.connect(lambda _pos, _index: self._keep_width())
            sizes = splitter.sizes()
            index = splitter.indexOf(side)
            grown = self.width_kept - sizes[index]
            if grown:
                sizes[index - 1] = max(sizes[index - 1] - grown, 300)  # the chat beside it gives the room
                sizes[index] = self.width_kept
                splitter.setSizes(sizes)
        if on:
            self.refresh()

    def _keep_width(self) -> None:
        """The person dragged the column's edge: that is its width from now on, in every chat."""
        if self.side.isVisible() and self.side.width() > 0:
            self.width_kept = self.side.width()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, (FilesChanged, ChangesUndone, ChatSetAside)) and event.session_key == self.session_key:
            self.refresh()


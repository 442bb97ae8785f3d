"""The Sessions tab: every chat with its title, last activity and size; open it in the chat window,
export it as Markdown, or delete it after a confirmation."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.local_time import local_time
from desktop.kernel.taskset import spawn
from desktop.memory.export import session_markdown
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import confirm
from desktop.ui.skills import dialogs
from desktop.ui.skills.details import Notice
from desktop.ui.skills.model import GREEN, RED

KEY_ROLE = Qt.ItemDataRole.UserRole + 1


async def pick_export_path(parent: QWidget, suggested: str) -> Path | None:
    dialog = QFileDialog(parent, "Export the chat as Markdown", str(Path.home() / suggested))
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    dialog.setNameFilters(["Markdown (*.md)", "All files (*)"])
    dialog.setDefaultSuffix("md")
    accepted = await dialogs.run_dialog(dialog) == QDialog.DialogCode.Accepted
    chosen = dialog.selectedFiles()
    dialog.deleteLater()
    return Path(chosen[0]) if accepted and chosen else None


class SessionsTab(QWidget):
    open_session = Signal(str)  # session key
    deleted = Signal(str)

    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        # The questions this tab asks; tests replace them with plain coroutines.
        self.confirm: Callable[[str, str, str], Awaitable[bool]] = (
            lambda title, text, action: confirm(self, title, text, action))
        self.pick_export_path: Callable[[str], Awaitable[Path | None]] = (
            lambda suggested: pick_export_path(self, suggested))
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels(["Title", "Last activity", "Messages"])
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.sortByColumn(1, Qt.SortOrder.DescendingOrder)  # most recent first
        self.table.setSortingEnabled(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.open_button = QPushButton("Open in chat")
        self.export_button = QPushButton("Export as Markdown…")
        self.delete_button = QPushButton("Delete…")
        self.reload_button = QPushButton("Reload")
        self.notice = Notice()
        buttons = QHBoxLayout()
        for button in (self.open_button, self.export_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.reload_button)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.notice)
        layout.addWidget(self.table, 1)
        self.table.doubleClicked.connect(lambda _i: self._open())
        self.open_button.clicked.connect(self._open)
        self.export_button.clicked.connect(lambda: spawn(self.export()))
        self.delete_button.clicked.connect(lambda: spawn(self.delete()))
        self.reload_button.clicked.connect(lambda: spawn(self.load()))
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self._enable()

    def selected_key(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].data(KEY_ROLE) if rows else None

    def select(self, key: str) -> None:
        for row in range(self.model.rowCount()):
            if self.model.item(row, 0).data(KEY_ROLE) == key:
                self.table.selectRow(row)
                return

    async def load(self) -> None:
        keep = self.selected_key()
        infos = await self.bridge.list_chats()
        self.table.setSortingEnabled(False)
        self.model.removeRows(0, self.model.rowCount())
        for info in infos:
            title = QStandardItem(info.title)
            title.setData(info.key, KEY_ROLE)
            title.setToolTip(info.key)
            count = QStandardItem()
            count.setData(info.message_count, Qt.ItemDataRole.DisplayRole)  # sorts as a number
            self.model.appendRow([title, QStandardItem(local_time(info.updated_at)), count])
        self.table.setSortingEnabled(True)
        if keep:
            self.select(keep)
        self._enable()

    async def export(self) -> Path | None:
        key = self.selected_key()
        if key is None:
            return None
        session = await self.bridge.load_chat(key)
        target = await self.pick_export_path(_file_name(session.title))
        if target is None:
            return None
        text = await asyncio.to_thread(session_markdown, session)
        try:
            await asyncio.to_thread(atomic_write_text, target, text)
        except OSError as exc:
            self.notice.show_html(RED, html.escape(f"Could not write {target}: {exc.strerror or exc}"))
            return None
        self.notice.show_html(GREEN, html.escape(f"Exported “{session.title}” to {target}."))
        return target

    async def delete(self) -> bool:
        key = self.selected_key()
        if key is None:
            return False
        title = self.model.item(self.table.selectionModel().selectedRows()[0].row(), 0).text()
        if self.bridge.conversations.busy(key):
            self.notice.show_html(RED, html.escape(f"“{title}” is answering right now; stop it before deleting."))
            return False
        if not await self.confirm("Delete chat", f"Delete “{title}” and all its messages? This cannot be undone. "
                                  "(What was archived to memory stays there.)", "Delete"):
            return False
        await self.bridge.delete_chat(key)
        self.notice.show_html(GREEN, html.escape(f"Deleted “{title}”."))
        await self.load()
        self.deleted.emit(key)
        return True

    def _open(self) -> None:
        key = self.selected_key()
        if key is not None:
            self.open_session.emit(key)

    def _enable(self) -> None:
        chosen = self.selected_key() is not None
        for button in (self.open_button, self.export_button, self.delete_button):
            button.setEnabled(chosen)


def _file_name(title: str) -> str:
    stem = re.sub(r"[^\w\- ]+", "", title).strip().replace(" ", "-")[:60] or "chat"
    return f"{stem}.md"

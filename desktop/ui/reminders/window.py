"""The Reminders window (tray menu → Reminders): every scheduled job with its schedule in words, its next
run in local time and the chat it belongs to; pause or resume, run now, delete, open its chat. It follows
changes made anywhere (the `cron` tool, a run, the command line in the app) as they happen."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.taskset import spawn
from desktop.reminders import Reminders
from desktop.reminders.book import local
from desktop.reminders.jobs import Job
from desktop.scheduler.schedules import describe
from desktop.ui.bridge import CoreBridge
from desktop.ui.skills import dialogs
from desktop.ui.skills.details import Notice
from desktop.ui.skills.model import GREEN, RED

ID_ROLE = Qt.ItemDataRole.UserRole + 1
EMPTY = ("No reminders yet. Ask in any chat, for example “remind me in 20 minutes to stretch” or "
         "“every weekday at 9, summarise my calendar”.")


def next_run_words(job: Job) -> str:
    if job.missed is not None:
        return f"Missed ({local(job.missed)})"
    if job.paused:
        return "Paused"
    return local(job.next_run) if job.next_run is not None else "—"


def _sentence(words: str) -> str:
    return words[:1].upper() + words[1:]


class RemindersWindow(QWidget):
    open_session = Signal(str)  # "Open chat" or a double click: the app shows the job's chat

    def __init__(self, reminders: Reminders, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        """`reminders` holds the jobs; `bridge` names their chats."""
        super().__init__(parent)
        self.reminders = reminders
        self.bridge = bridge
        self.setWindowTitle("Reminders")
        self.resize(860, 420)
        # The question Delete asks; tests replace it with a plain coroutine.
        self.confirm: Callable[[str, str, str], Awaitable[bool]] = (
            lambda title, text, action: dialogs.confirm(self, title, text, action))
        self._titles: dict[str, str] = {}
        self.model = QStandardItemModel(0, 4, self)
        self.model.setHorizontalHeaderLabels(["Reminder", "When", "Next run", "Chat"])
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.pause_button = QPushButton("Pause")
        self.run_button = QPushButton("Run now")
        self.delete_button = QPushButton("Delete…")
        self.open_button = QPushButton("Open chat")
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.notice = Notice()
        buttons = QHBoxLayout()
        for button in (self.pause_button, self.run_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.notice)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 1)
        self.pause_button.clicked.connect(lambda: spawn(self.toggle_pause()))
        self.run_button.clicked.connect(self.run_now)
        self.delete_button.clicked.connect(lambda: spawn(self.delete()))
        self.open_button.clicked.connect(self._open)
        self.table.doubleClicked.connect(lambda _index: self._open())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.destroyed.connect(reminders.subscribe(self.refresh))  # no calls into a deleted window
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            spawn(self._load_titles())

    def selected(self) -> Job | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        job_id = rows[0].data(ID_ROLE)
        return next((job for job in self.reminders.jobs if job.id == job_id), None)

    def refresh(self) -> None:
        """Show the jobs as they are now, keeping the selection."""
        chosen = self.selected()
        self.model.removeRows(0, self.model.rowCount())
        jobs = self.reminders.jobs
        for job in jobs:
            label = QStandardItem(job.label)
            label.setData(job.id, ID_ROLE)
            label.setToolTip(job.message)
            chat = QStandardItem(self._titles.get(job.session) or self.bridge.session_title(job.session))
            chat.setToolTip(job.session)
            self.model.appendRow([label, QStandardItem(_sentence(describe(job.schedule))),
                                  QStandardItem(next_run_words(job)), chat])
        if chosen is not None:
            for row in range(self.model.rowCount()):
                if self.model.item(row, 0).data(ID_ROLE) == chosen.id:
                    self.table.selectRow(row)
        self.empty.setVisible(not jobs)
        self.table.setVisible(bool(jobs))
        self._enable()

    async def toggle_pause(self) -> None:
        job = self.selected()
        if job is not None and job.missed is None:
            await self.reminders.set_paused(job.id, not job.paused)

    def run_now(self) -> None:
        job = self.selected()
        if job is None:
            return
        self.reminders.run_now(job.id)
        self.notice.show_html(GREEN, html.escape(f"“{job.label}” is running now in its chat; "
                                                 "the answer comes as a notification."))

    async def delete(self) -> bool:
        job = self.selected()
        if job is None:
            return False
        if not await self.confirm("Delete reminder", f"Delete “{job.label}” ({describe(job.schedule)})? "
                                  "It will not run again.", "Delete"):
            return False
        try:
            await self.reminders.remove(job.id)
        except LookupError as exc:  # it ran (a one-shot is done) or went away meanwhile
            self.notice.show_html(RED, html.escape(str(exc)))
            return False
        self.notice.show_html(GREEN, html.escape(f"Deleted “{job.label}”."))
        return True

    def _open(self) -> None:
        job = self.selected()
        if job is not None:
            self.open_session.emit(job.session)

    async def _load_titles(self) -> None:
        self._titles = {info.key: info.title for info in await self.bridge.list_chats()}
        self.refresh()

    def _enable(self) -> None:
        job = self.selected()
        for button in (self.pause_button, self.run_button, self.delete_button, self.open_button):
            button.setEnabled(job is not None)
        self.pause_button.setText("Resume" if job is not None and job.paused else "Pause")
        if job is not None and job.missed is not None:
            self.pause_button.setEnabled(False)

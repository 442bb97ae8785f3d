"""The History tab: history.jsonl as a table model, with incremental search by text or regex and date.

Opening shows the newest entries read from the end of the file; the whole file loads on a worker
thread behind it. Searches run on a worker thread too and stream their matches into the model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QDate, QModelIndex, QObject, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDateEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.local_time import local_time
from desktop.kernel.patterns import BadPattern, TooSlow
from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.memory.history_search import Query, read_newest, search
from desktop.memory.store import HistoryEntry
from desktop.ui.bridge import CoreBridge
from desktop.ui.plain_text import plain_tip

FIRST_SCREEN = 300  # entries shown before the whole file is loaded
FIRST_PAINT_GRACE = 0.15  # seconds
SEARCH_DELAY_MS = 150
PREVIEW_CHARS = 200
_COLUMNS = ("Time", "Chat", "Text")
EMPTY = ("Nothing here yet. When a chat grows too long for the model, or you start a new one, its older "
         "messages are summarised here. Dream reads these summaries to keep your memory files up to date, "
         "and you can search them above.")
Index = QModelIndex | QPersistentModelIndex


class HistoryModel(QAbstractTableModel):
    """Entries newest first; one row per entry, no widget per row."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.entries: list[HistoryEntry] = []
        self.titles: dict[str, str] = {}  # session key -> chat title

    def chat(self, entry: HistoryEntry) -> str:
        return self.titles.get(entry.session_key, "(deleted chat)")

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's signature
        return 0 if parent.isValid() else len(self.entries)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(_COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return _COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        entry = self.entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return local_time(entry.timestamp)
            if index.column() == 1:
                return self.chat(entry)
            return _preview(entry.content)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 2:
                return plain_tip(entry.content[:1000])  # the model's summary, or what a command wrote in the file
            return entry.session_key if index.column() == 1 else None
        return None

    def replace(self, entries: Sequence[HistoryEntry]) -> None:
        self.beginResetModel()
        self.entries = list(entries)
        self.endResetModel()

    def extend(self, entries: Sequence[HistoryEntry]) -> None:
        if not entries:
            return
        start = len(self.entries)
        self.beginInsertRows(QModelIndex(), start, start + len(entries) - 1)
        self.entries.extend(entries)
        self.endInsertRows()


class _Stream(QObject):
    """Carries batches from the search thread to the GUI thread (queued, since emitted off-thread)."""

    batch = Signal(int, list)  # search number, entries
    done = Signal(int, int)  # search number, matches
    slow = Signal(int)  # search number: its regular expression ran out of time


class HistoryTab(QWidget):
    def __init__(self, memory: Memory, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory = memory
        self.bridge = bridge  # the chats' titles
        self.model = HistoryModel(self)
        self._all: list[HistoryEntry] | None = None  # newest first, once loaded
        self._loading: asyncio.Task[None] | None = None
        self._loaded_stamp: tuple[int, int] | None = None  # (size, mtime) of the file as loaded
        self._search_number = 0
        self._cancel = threading.Event()
        self._stream = _Stream(self)
        self._stream.batch.connect(self._on_batch)
        self._stream.done.connect(self._on_done)
        self._stream.slow.connect(self._on_slow)
        self.searching = False

        self.text = QLineEdit()
        self.text.setPlaceholderText("Search history…")
        self.text.setClearButtonEnabled(True)
        self.regex = QCheckBox("Regex")
        self.by_date = QCheckBox("Between")
        today = QDate.currentDate()
        self.first_day = _date_edit(today.addMonths(-1))
        self.last_day = _date_edit(today)
        self.reload_button = QPushButton("Reload")
        self.status = QLabel()
        self.status.setObjectName("historyStatus")
        bar = QHBoxLayout()
        for widget in (self.text, self.regex, self.by_date, self.first_day, QLabel("and"), self.last_day,
                       self.reload_button):
            bar.addWidget(widget)
        bar.setStretch(0, 1)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table.setColumnWidth(0, 130)
        self.table.setColumnWidth(1, 150)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setPlaceholderText("Select an entry to read it in full.")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)

        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.setInterval(SEARCH_DELAY_MS)
        self._delay.timeout.connect(self.run_search)
        self.text.textChanged.connect(lambda _t: self._delay.start())
        self.regex.toggled.connect(lambda _on: self._delay.start())
        self.by_date.toggled.connect(self._date_toggled)
        self.first_day.dateChanged.connect(lambda _d: self._delay.start())
        self.last_day.dateChanged.connect(lambda _d: self._delay.start())
        self.reload_button.clicked.connect(lambda: spawn(self.load()))
        self.table.selectionModel().currentRowChanged.connect(self._open_row)
        self._date_toggled(False)

    @property
    def loaded(self) -> bool:
        return self._all is not None

    def query(self) -> Query:
        first = last = ""
        if self.by_date.isChecked():
            first = self.first_day.date().toString("yyyy-MM-dd")
            last = self.last_day.date().toString("yyyy-MM-dd")
        return Query(self.text.text().strip(), self.regex.isChecked(), first, last)

    async def refresh(self) -> None:
        """Load when the file changed since the last load (or was never loaded, even when there is none yet)."""
        stamp = await asyncio.to_thread(self.memory.store.history_stamp)
        if self._all is None or stamp != self._loaded_stamp:
            await self.load()

    async def load(self) -> None:
        """Newest entries first (fast), then the whole file for searching."""
        if self._loading is not None and not self._loading.done():
            return await self._loading
        self._loading = asyncio.ensure_future(self._load())
        await self._loading

    async def _load(self) -> None:
        self._loaded_stamp = await asyncio.to_thread(self.memory.store.history_stamp)
        newest = await asyncio.to_thread(self._read_newest)
        self.model.titles = {info.key: info.title for info in await self.bridge.list_chats()}
        self.detail.setPlaceholderText(EMPTY if not newest else "Select an entry to read it in full.")
        if self.query().empty:
            self.model.replace(newest)
            self.status.setText(f"Newest {len(newest)} entries; loading the rest…" if len(newest) == FIRST_SCREEN
                                else _count(len(newest), "entry", "entries"))
        # Paint the first screen before the parse starts: a parsing thread competes for the interpreter
        # lock with every model.data() call the table makes while it paints.
        await asyncio.sleep(FIRST_PAINT_GRACE)
        entries = await asyncio.to_thread(self.memory.store.read_history)
        entries.reverse()
        self._all = entries
        self.run_search()

    def _read_newest(self) -> list[HistoryEntry]:
        """The first screen, newest first, read from the end of the file (blocking: call through a thread)."""
        return read_newest(self.memory.store.open_history(), FIRST_SCREEN)

    def run_search(self) -> None:
        """Start the current query over everything loaded, replacing a search still running."""
        self._delay.stop()
        self._cancel.set()
        self._search_number += 1
        if self._all is None:
            return  # the load in progress runs the search when it is done
        query = self.query()
        if query.first_day > query.last_day:  # days as yyyy-MM-dd compare as text; both empty without a range
            self.searching = False
            self.model.replace([])
            self.status.setText(f"The first day, {query.first_day}, is after the last, {query.last_day}: no day is "
                                "between them. Swap them to search that range.")
            return
        if query.empty:
            self.searching = False
            self.model.replace(self._all)
            self.status.setText(_count(len(self._all), "entry", "entries"))
            return
        try:
            query.matcher()
        except BadPattern as exc:
            self.searching = False
            self.model.replace([])
            self.status.setText(f"Invalid regular expression: {exc}")
            return
        self.model.replace([])
        self.detail.clear()
        self.status.setText("Searching…")
        self.searching = True
        self._cancel = threading.Event()
        number, entries, cancel, stream = self._search_number, self._all, self._cancel, self._stream

        def work() -> None:
            try:
                found = search(entries, query, lambda batch: stream.batch.emit(number, batch), cancel)
            except TooSlow:
                stream.slow.emit(number)
                return
            if not cancel.is_set():
                stream.done.emit(number, found)

        spawn(asyncio.to_thread(work))

    def _on_batch(self, number: int, batch: list[HistoryEntry]) -> None:
        if number == self._search_number:
            self.model.extend(batch)
            self.status.setText(f"Searching… {_count(len(self.model.entries), 'match', 'matches')} so far")

    def _on_done(self, number: int, found: int) -> None:
        if number == self._search_number:
            self.searching = False
            self.status.setText(_count(found, "match", "matches") + f" in {len(self._all or [])} entries")

    def _on_slow(self, number: int) -> None:
        if number == self._search_number:
            self.searching = False
            self.status.setText("Stopped: the regular expression takes too long on these entries (it backtracks "
                                f"too much); simplify it. {_count(len(self.model.entries), 'match', 'matches')} so far")

    def _open_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid() or current.row() >= len(self.model.entries):
            return
        entry = self.model.entries[current.row()]
        self.detail.setPlainText(f"{local_time(entry.timestamp, seconds=True)} · {self.model.chat(entry)} · "
                                 f"#{entry.cursor}\n\n{entry.content}")

    def _date_toggled(self, on: bool) -> None:
        self.first_day.setEnabled(on)
        self.last_day.setEnabled(on)
        self._delay.start()


def _date_edit(date: QDate) -> QDateEdit:
    edit = QDateEdit(date)
    edit.setCalendarPopup(True)
    edit.setDisplayFormat("yyyy-MM-dd")
    return edit


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[:PREVIEW_CHARS] + "…"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"

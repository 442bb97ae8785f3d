"""One session's transcript as a Qt list model: the rows of desktop/conversation/transcript.py (read from the
saved session, then kept live from bus events), announced to views. Streamed text is appended at once but
announced at most every FLUSH_MS, so a fast stream costs one re-render per frame, not one per token."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)

from desktop.conversation.transcript import ChatRow, Kind, Transcript, question_row, tool_summary
from desktop.kernel.bus import Event, MessageKind, MessageTakenIn, TurnStarted

FLUSH_MS = 30
RowRole = Qt.ItemDataRole.UserRole + 1


class TranscriptModel(QAbstractListModel):
    """Rows of one session. `apply` takes the bus events of this session."""

    busy_changed = Signal(bool)
    progress_changed = Signal()

    def __init__(self, session_key: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session_key = session_key
        self.transcript = Transcript(self)
        self._asked: deque[str] = deque()  # questions shown here as they were sent, their turns not begun yet
        self._dirty: dict[int, ChatRow] = {}
        self._flush = QTimer(self, singleShot=True, interval=FLUSH_MS)
        self._flush.timeout.connect(self.flush)
        self._ticker = QTimer(self, interval=1000)  # running tools show their time: one repaint a second
        self._ticker.timeout.connect(self._tick)

    @property
    def rows(self) -> list[ChatRow]:
        return self.transcript.rows

    @property
    def busy(self) -> bool:
        return self.transcript.busy

    @busy.setter
    def busy(self, busy: bool) -> None:
        """Whether the chat's turn runs already when the model is made (its start was not seen)."""
        self.transcript.busy = busy

    @property
    def progress(self) -> str:
        return self.transcript.progress

    @property
    def loaded(self) -> bool:
        return self.transcript.loaded

    # -- Qt model interface

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.text if row.tool is None else f"{row.tool.title} {tool_summary(row.tool)}"
        if role == RowRole:
            return row
        return None

    # -- the transcript's doors

    def apply(self, event: Event) -> None:
        if (isinstance(event, TurnStarted) and event.kind is MessageKind.USER and self.loaded
                and not self._asked_here(event.message)):
            self._asked_elsewhere(event)
        self.transcript.apply(event)
        if isinstance(event, MessageTakenIn) and self.loaded:
            row = question_row(event.message)
            if row.kind is not Kind.USER or not self._asked_here(row.text):  # sent from elsewhere: shown now
                self.transcript.append(row)
        if self.transcript.running and not self._ticker.isActive():
            self._ticker.start()

    def load(self, rows: list[ChatRow]) -> None:
        self.transcript.load(rows)

    def append(self, row: ChatRow) -> ChatRow:
        return self.transcript.append(row)

    def add_user(self, text: str, media: list[str] | None = None, names: Mapping[str, str] | None = None) -> ChatRow:
        self._asked.append(text)
        return self.transcript.add_user(text, media, names)

    def asked_again(self, text: str) -> None:
        """The question shown last is asked again in its place (Retry, Regenerate): no second row for it."""
        self._asked.append(text)

    def _asked_elsewhere(self, event: TurnStarted) -> None:
        """A question asked elsewhere (the quick prompt opened from this chat) shows before its answer. Asked again
        there (its Retry), it takes the chat's last turn's place as a Retry here does: the question stays, what
        its turn showed goes; rewritten, it replaces that question too (the chat's file drops the same)."""
        last = self.transcript.last_user()
        if event.redo and last is not None:
            self.transcript.drop_after(last, inclusive=last.text != event.message)
            if last.text == event.message:
                return
        self.transcript.add_user(event.message)

    def _asked_here(self, text: str) -> bool:
        """Whether the turn beginning (or the message taken into the running turn) is a question shown here as
        sent. One that began no turn of its own and was not taken in (a command that answered itself) is passed
        over."""
        if text not in self._asked:
            return False
        while self._asked.popleft() != text:
            pass
        return True

    def drop_after(self, row: ChatRow, *, inclusive: bool = False) -> None:
        self.transcript.drop_after(row, inclusive=inclusive)

    def row_of_message(self, message: int) -> int | None:
        return self.transcript.row_of_message(message)

    def last_user(self) -> ChatRow | None:
        return self.transcript.last_user()

    def redoable(self) -> bool:
        return self.transcript.redoable()

    def toggle(self, row: ChatRow) -> None:
        """Expand or collapse a tool call or reasoning row, or a long message of the person's (Show more)."""
        row.expanded = not row.expanded
        self.touch(row, now=True)

    def touch(self, row: ChatRow, now: bool = False) -> None:
        """Mark a row changed; views hear about it on the next flush (at once with `now`)."""
        self._dirty[row.uid] = row
        if now:
            self.flush()
        elif not self._flush.isActive():
            self._flush.start()

    def flush(self) -> None:
        self._flush.stop()
        dirty, self._dirty = self._dirty, {}
        for row in dirty.values():
            row.version += 1
            position = self._position(row)
            if position is not None:
                index = self.index(position)
                self.dataChanged.emit(index, index)

    def _position(self, row: ChatRow) -> int | None:
        """Changed rows are nearly always the last ones (the streaming answer, the running tool)."""
        for i in range(len(self.rows) - 1, max(len(self.rows) - 8, 0) - 1, -1):
            if self.rows[i] is row:
                return i
        try:
            return self.rows.index(row)
        except ValueError:
            return None

    def _tick(self) -> None:
        if not self.transcript.running:
            self._ticker.stop()
        for row in self.transcript.running.values():
            self.touch(row)

    # -- what the transcript tells (desktop.conversation.transcript.Changes)

    def inserting(self, position: int) -> None:
        self.flush()
        self.beginInsertRows(QModelIndex(), position, position)

    def inserted(self) -> None:
        self.endInsertRows()

    def resetting(self) -> None:
        self.flush()
        self.beginResetModel()

    def reset(self) -> None:
        self.endResetModel()

    def changed(self, row: ChatRow, now: bool) -> None:
        self.touch(row, now)

    def busy_set(self, busy: bool) -> None:
        self.busy_changed.emit(busy)

    def progress_set(self) -> None:
        self.progress_changed.emit()

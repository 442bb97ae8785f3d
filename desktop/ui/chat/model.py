"""One session's transcript as a Qt list model: rows built from the saved session, then kept live
from bus events. Streamed text is appended at once but announced to views at most every
FLUSH_MS, so a fast stream costs one re-render per frame, not one per token."""

from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass, field
from enum import Enum
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

from desktop.kernel.bus import (
    Event,
    MessageKind,
    OutboundMessage,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolAwaiting,
    ToolFinished,
    ToolProgress,
    ToolStarted,
    TurnError,
    TurnFinished,
    TurnProgress,
    TurnStarted,
)

FLUSH_MS = 30
STOPPED_NOTE = "Stopped."
CUT_OFF = "✂ Cut off: the answer broke off here and is not complete."  # under an answer whose call failed midway
INTERRUPTED = "Interrupted by Stop."
NO_RESULT = "No result was saved."
_uids = itertools.count(1)


class Kind(Enum):
    USER = "user"
    ASSISTANT = "assistant"
    REASONING = "reasoning"
    TOOL = "tool"
    ERROR = "error"    # a failed turn, with Retry
    NOTICE = "notice"  # a quiet line: "Stopped.", a failed turn in a saved session


@dataclass(slots=True)
class ToolCall:
    call_id: str
    name: str
    arguments: dict[str, Any]
    result: str | None = None
    ok: bool | None = None  # None while running
    seconds: float | None = None  # unknown for sessions saved before durations were
    started: float | None = None  # time.monotonic() when it started here, for the running time
    tail: str = ""  # the last lines it printed so far, while it runs
    awaiting: bool = False  # waits for the person's approval before it runs
    label: str = ""  # shown instead of the name when set (an MCP tool: "server · tool")

    @property
    def title(self) -> str:
        return self.label or self.name


@dataclass(eq=False, slots=True)  # identity equality: rows are found with list.index
class ChatRow:
    kind: Kind
    text: str = ""
    media: list[str] = field(default_factory=list)
    tool: ToolCall | None = None
    expanded: bool = False
    streaming: bool = False
    stopped: bool = False
    cut_off: bool = False  # an answer whose model call failed midway: kept as shown, marked as not whole
    fix_in_settings: bool = False  # an ERROR whose cure is in Settings (address, key, model): offer to open it
    message: int = -1  # the index of the saved message it shows; -1 for a row built from live events
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0  # bumped on every visible change; views cache layouts by (uid, version)


RowRole = Qt.ItemDataRole.UserRole + 1


class TranscriptModel(QAbstractListModel):
    """Rows of one session. `apply` takes the bus events of this session."""

    busy_changed = Signal(bool)
    progress_changed = Signal()

    def __init__(self, session_key: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session_key = session_key
        self.rows: list[ChatRow] = []
        self.busy = False
        self.progress = ""  # what the running turn waits for when it is not just working ("Retrying (2 of 3)…")
        self.loaded = False
        self._text_row: ChatRow | None = None
        self._reasoning_row: ChatRow | None = None
        self._tool_rows: dict[str, ChatRow] = {}
        self._dirty: dict[int, ChatRow] = {}
        self._flush = QTimer(self, singleShot=True, interval=FLUSH_MS)
        self._flush.timeout.connect(self.flush)
        self._ticker = QTimer(self, interval=1000)  # running tools show their time: one repaint a second
        self._ticker.timeout.connect(self._tick)

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

    # -- changes

    def load(self, rows: list[ChatRow]) -> None:
        """Saved rows go first; anything that arrived while the file was read stays after them."""
        self.flush()
        self.beginResetModel()
        self.rows = [*rows, *self.rows]
        for row in rows:  # calls saved without a result: still running, or cut off by a crash
            if row.tool is not None and row.tool.ok is None:
                if self.busy:
                    self._tool_rows[row.tool.call_id] = row
                else:
                    row.tool.result, row.tool.ok = NO_RESULT, False
        self.loaded = True
        self.endResetModel()

    def append(self, row: ChatRow) -> ChatRow:
        self.flush()
        position = len(self.rows)
        self.beginInsertRows(QModelIndex(), position, position)
        self.rows.append(row)
        self.endInsertRows()
        return row

    def add_user(self, text: str, media: list[str] | None = None) -> ChatRow:
        for row in self.rows[-3:]:  # only the latest failed turn offers Retry: an earlier one becomes a note
            if row.kind is Kind.ERROR:
                row.kind, row.text = Kind.NOTICE, failed_note(row.text)
                self.touch(row)
        return self.append(ChatRow(Kind.USER, text, list(media or [])))

    def toggle(self, row: ChatRow) -> None:
        """Expand or collapse a tool call or reasoning row."""
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

    def row_of_message(self, message: int) -> int | None:
        """The first row showing saved message `message` (or the nearest after it, or the last row when the chat
        has since lost it); None when that message is not among the rows read from the file (built live)."""
        saved = [i for i, row in enumerate(self.rows) if row.message >= 0]
        found = next((i for i in saved if self.rows[i].message >= message), None)
        if found is not None or len(saved) < len(self.rows):
            return found
        return saved[-1] if saved else None

    def last_user(self) -> ChatRow | None:
        return next((r for r in reversed(self.rows) if r.kind is Kind.USER), None)

    def drop_after(self, row: ChatRow, *, inclusive: bool = False) -> None:
        """Redo: the rows after the last question go (Retry, Regenerate), or from it on (Edit)."""
        self.flush()
        self.beginResetModel()
        del self.rows[self.rows.index(row) + (0 if inclusive else 1):]
        self._tool_rows.clear()
        self.endResetModel()

    def _tick(self) -> None:
        if not self._tool_rows:
            self._ticker.stop()
        for row in self._tool_rows.values():
            self.touch(row)

    def _set_progress(self, text: str) -> None:
        if text != self.progress:
            self.progress = text
            self.progress_changed.emit()

    def _set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busy_changed.emit(busy)

    # -- bus events

    def apply(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _turn_started(self, event: TurnStarted) -> None:
        self._close_streams()
        self._set_busy(True)
        started_by = _STARTED_BY.get(event.kind)
        if started_by:  # not the person: say what the answer that follows is about
            self.append(ChatRow(Kind.NOTICE, started_by))

    def redoable(self) -> bool:
        """Whether the last turn is the person's question and its answer (Regenerate and Edit redo it): not
        while one runs, nor after a background result or reminder, whose turn is not theirs to redo."""
        last = self.last_user()
        return (not self.busy and last is not None
                and all(r.kind is not Kind.NOTICE for r in self.rows[self.rows.index(last) + 1:]))

    def _retrying(self, event: Retrying) -> None:
        self._set_progress(f"Retrying ({event.attempt} of {event.attempts})…")

    def _turn_progress(self, event: TurnProgress) -> None:
        self._set_progress(event.text)

    def _reasoning(self, event: ReasoningDelta) -> None:
        row = self._reasoning_row
        if row is None or self._text_row is not None:
            self._close_streams()
            row = self._reasoning_row = self.append(ChatRow(Kind.REASONING, streaming=True))
        row.text += event.text
        self.touch(row)

    def _text(self, event: TextDelta) -> None:
        self._set_progress("")
        row = self._text_row
        if row is None:
            self._end_reasoning()
            row = self._text_row = self.append(ChatRow(Kind.ASSISTANT, streaming=True))
        row.text += event.text
        self.touch(row)

    def _tool_started(self, event: ToolStarted) -> None:
        self._set_progress("")
        self._close_streams()
        call = ToolCall(event.call_id, event.name, event.arguments, started=time.monotonic(), label=event.label)
        self._tool_rows[event.call_id] = self.append(ChatRow(Kind.TOOL, tool=call))
        self._ticker.start()

    def _tool_progress(self, event: ToolProgress) -> None:
        row = self._tool_rows.get(event.call_id)
        if row is not None and row.tool is not None:
            row.tool.tail = event.tail
            self.touch(row)

    def _tool_awaiting(self, event: ToolAwaiting) -> None:
        row = self._tool_rows.get(event.call_id)
        if row is not None and row.tool is not None:
            row.tool.awaiting = event.awaiting
            if not event.awaiting:
                row.tool.started = time.monotonic()  # its running time starts with the answer
            self.touch(row)

    def _tool_finished(self, event: ToolFinished) -> None:
        row = self._tool_rows.pop(event.call_id, None)
        if row is None or row.tool is None:
            return
        row.tool.result, row.tool.ok, row.tool.seconds = event.result, event.ok, event.seconds
        self.touch(row, now=True)

    def _outbound(self, event: OutboundMessage) -> None:
        """A message that is not the turn's answer (the message tool, /status during a turn) stands alone."""
        if event.content:
            self._close_streams()
            self.append(ChatRow(Kind.ASSISTANT, event.content))

    def _turn_finished(self, event: TurnFinished) -> None:
        if not event.stopped and event.content:
            if self._text_row is None:  # not streamed: a command's reply, or a provider that sent it whole
                self.append(ChatRow(Kind.ASSISTANT, event.content))
            elif self._text_row.text != event.content:
                self._text_row.text = event.content  # e.g. <think> blocks stripped from the streamed text
                self.touch(self._text_row)
        if event.stopped:
            if self._text_row is not None:
                self._text_row.stopped = True
                self.touch(self._text_row)
            for row in self._tool_rows.values():
                if row.tool is not None:
                    row.tool.result, row.tool.ok = INTERRUPTED, False
                    self.touch(row)
            self._tool_rows.clear()
            if self._text_row is None:
                self.append(ChatRow(Kind.NOTICE, STOPPED_NOTE))
        self._close_streams()
        self._set_busy(False)

    def _turn_error(self, event: TurnError) -> None:
        self._keep_cut_off()
        self._close_streams()
        self.append(ChatRow(Kind.ERROR, event.message, fix_in_settings=fixed_in_settings(event.kind)))
        self._set_busy(False)

    def _keep_cut_off(self) -> None:
        """A failed call's half-streamed answer stays, marked cut off (the session keeps it so, for a reload);
        its reasoning goes, as the session keeps none of it, so the chat looks the same live as after a reload."""
        if self._text_row is not None:
            self._text_row.cut_off = True
            self.touch(self._text_row)
        unfinished = self._reasoning_row
        self._reasoning_row = None
        if unfinished is not None:
            self.flush()
            self.beginResetModel()  # rare, and views then measure the rows afresh, as after Retry
            self.rows = [r for r in self.rows if r is not unfinished]
            self.endResetModel()

    def _end_reasoning(self) -> None:
        if self._reasoning_row is not None:
            self._reasoning_row.streaming = False
            self.touch(self._reasoning_row)
            self._reasoning_row = None

    def _close_streams(self) -> None:
        self._set_progress("")
        self._end_reasoning()
        if self._text_row is not None:
            self._text_row.streaming = False
            self.touch(self._text_row)
            self._text_row = None
        self.flush()


_HANDLERS: dict[type, Any] = {
    TurnStarted: TranscriptModel._turn_started, ReasoningDelta: TranscriptModel._reasoning,
    TextDelta: TranscriptModel._text, ToolStarted: TranscriptModel._tool_started,
    ToolFinished: TranscriptModel._tool_finished, OutboundMessage: TranscriptModel._outbound,
    TurnFinished: TranscriptModel._turn_finished, TurnError: TranscriptModel._turn_error,
    Retrying: TranscriptModel._retrying, ToolProgress: TranscriptModel._tool_progress,
    ToolAwaiting: TranscriptModel._tool_awaiting, TurnProgress: TranscriptModel._turn_progress,
}


_STARTED_BY = {MessageKind.SUBAGENT_RESULT: "A background task reported back",
               MessageKind.SCHEDULED: "A scheduled job came due"}


def failed_note(reason: str) -> str:
    return f"No reply: {reason}"


def fixed_in_settings(kind: str) -> bool:
    """Whether a failure of this kind is cured in Settings (address, key, model): Open Settings is offered."""
    from desktop.providers.failures import SETTINGS_KINDS  # httpx comes with it: not at window start-up

    return kind in {k.value for k in SETTINGS_KINDS}

_KEY_ARGUMENTS = ("command", "path", "url", "query", "pattern", "name", "content")


def tool_summary(call: ToolCall) -> str:
    """The one argument that says what the call does (the command, the path, ...), on one line."""
    args = call.arguments
    value = next((args[k] for k in _KEY_ARGUMENTS if isinstance(args.get(k), str)), None)
    if value is None:
        value = next((v for v in args.values() if isinstance(v, (str, int, float))), "")
    return " ".join(str(value).split())


def format_arguments(arguments: dict[str, Any]) -> str:
    if set(arguments) == {"_raw"}:
        return str(arguments["_raw"])
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def rows_from_messages(messages: list[dict[str, Any]]) -> list[ChatRow]:
    """Rows for a saved session: pure Python, so it can run in a worker thread."""
    rows: list[ChatRow] = []
    calls: dict[str, ToolCall] = {}
    for number, message in enumerate(messages, 1):
        first = len(rows)
        role = message.get("role")
        if role == "user" and message.get("kind", "user") != "user":  # the app's message, not the person's
            rows.append(ChatRow(Kind.NOTICE, _headline(_text_of(message.get("content")))))
        elif role == "user":
            typed = message.get("typed")  # the person's words, where the content adds attached files' text
            shown = typed if isinstance(typed, str) else _text_of(message.get("content"))
            rows.append(ChatRow(Kind.USER, shown, list(message.get("media") or [])))
        elif role == "assistant":
            if message.get("reasoning_content"):
                rows.append(ChatRow(Kind.REASONING, str(message["reasoning_content"])))
            content = _text_of(message.get("content"))
            if message.get("failed"):  # the latest failed turn keeps its error box and Retry
                if message.get("partial"):
                    rows.append(ChatRow(Kind.ASSISTANT, str(message["partial"]), cut_off=True))
                reason = str(message.get("error") or "the model request failed.")
                kind = str(message.get("error_kind", "other"))
                rows.append(ChatRow(Kind.ERROR, reason, fix_in_settings=fixed_in_settings(kind))
                            if number == len(messages) else ChatRow(Kind.NOTICE, failed_note(reason)))
            elif content:
                rows.append(ChatRow(Kind.ASSISTANT, content, stopped=bool(message.get("stopped"))))
            for raw in message.get("tool_calls") or []:
                function = raw.get("function") or {}
                call = ToolCall(str(raw.get("id", "")), str(function.get("name", "?")),
                                _parse_arguments(function.get("arguments")))
                calls[call.call_id] = call
                rows.append(ChatRow(Kind.TOOL, tool=call))
        elif role == "tool":
            found = calls.pop(str(message.get("tool_call_id", "")), None)
            if found is not None:
                found.result = _text_of(message.get("content"))
                found.ok = bool(message.get("ok", True))
                found.label = str(message.get("label") or "")
                seconds = message.get("seconds")
                found.seconds = float(seconds) if isinstance(seconds, (int, float)) else None
        for row in rows[first:]:
            row.message = number - 1
    return rows


def _headline(text: str) -> str:
    """A background result or due reminder as a quiet line: its first line, e.g. 'Background task “X” finished'."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first.strip("[]")


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", f"[{p.get('type', 'content')}]")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}

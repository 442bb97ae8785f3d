"""A chat's transcript as rows, built one way: from a saved session's messages (a reload) and from a turn's bus
events (live), so a chat looks the same while its turn runs as after a restart. The chat window's list model,
the quick prompt and a background task's transcript all show these rows.

Qt-free: whoever shows the rows hears of each change through `Changes` (the chat's Qt list model turns them into
its signals); the quick prompt just reads the rows after each event."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from desktop.kernel.bus import (
    Event,
    MessageKind,
    MessageTakenIn,
    OutboundKind,
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

STOPPED_NOTE = "Stopped."
WAITING_NOTE = "Waiting for your answer"  # the running turn's status while a step's approval question waits
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
    summary: str = ""  # the call in its tool's own words, shown instead of its main argument when set

    @property
    def title(self) -> str:
        return self.label or self.name


@dataclass(eq=False, slots=True)  # identity equality: rows are found with list.index
class ChatRow:
    kind: Kind
    text: str = ""
    media: tuple[str, ...] = ()  # a tuple, not a list: a 10,000-message chat's rows are walked by every garbage
    # collection until they age, and 10,000 empty lists doubled that walk (a stall of the GUI thread)
    names: tuple[str, ...] = ()  # each of `media` as the person sent it, where a kept copy is named otherwise
    tool: ToolCall | None = None
    expanded: bool = False
    streaming: bool = False
    stopped: bool = False
    cut_off: bool = False  # an answer whose model call failed midway: kept as shown, marked as not whole
    fix_in_settings: bool = False  # an ERROR whose cure is in Settings (address, key, model): offer to open it
    message: int = -1  # the index of the saved message it shows; -1 for a row built from live events
    uid: int = field(default_factory=lambda: next(_uids))
    version: int = 0  # bumped on every visible change; views cache layouts by (uid, version)


class Changes(Protocol):
    """What a view of the rows hears: the list grows or is replaced, a row changes (`flush`: changes so far reach
    the view now, not at its next frame), the turn starts or ends, or says what it waits for."""

    def inserting(self, position: int) -> None: ...
    def inserted(self) -> None: ...
    def resetting(self) -> None: ...
    def reset(self) -> None: ...
    def changed(self, row: ChatRow, now: bool) -> None: ...
    def flush(self) -> None: ...
    def busy_set(self, busy: bool) -> None: ...
    def progress_set(self) -> None: ...


class _Unheard:
    """For a reader that looks at the rows when it likes."""

    def inserting(self, position: int) -> None: ...
    def inserted(self) -> None: ...
    def resetting(self) -> None: ...
    def reset(self) -> None: ...
    def changed(self, row: ChatRow, now: bool) -> None: ...
    def flush(self) -> None: ...
    def busy_set(self, busy: bool) -> None: ...
    def progress_set(self) -> None: ...


class Transcript:
    """The rows of one chat: saved ones from `load`, the person's from `add_user`, the rest from `apply`, which
    takes the bus events of this chat."""

    def __init__(self, changes: Changes | None = None) -> None:
        self.changes: Changes = changes or _Unheard()
        self.rows: list[ChatRow] = []
        self.busy = False
        self.progress = ""  # what the running turn waits for when it is not just working ("Retrying (2 of 3)…")
        self.stopped = False  # the last turn ended by Stop
        self.loaded = False
        self._text_row: ChatRow | None = None
        self._reasoning_row: ChatRow | None = None
        self._call_reasoning: ChatRow | None = None  # the reasoning of the model call under way, kept once it ends
        self.running: dict[str, ChatRow] = {}  # the running turn's unfinished tool calls, by call id

    # -- rows

    def load(self, rows: list[ChatRow]) -> None:
        """Saved rows go first; anything that arrived while the file was read stays after them."""
        self.changes.resetting()
        self.rows = [*rows, *self.rows]
        for row in rows:  # calls saved without a result: still running, or cut off by a crash
            if row.tool is not None and row.tool.ok is None:
                if self.busy:
                    self.running[row.tool.call_id] = row
                else:
                    row.tool.result, row.tool.ok = NO_RESULT, False
        self.loaded = True
        self.changes.reset()

    def append(self, row: ChatRow) -> ChatRow:
        self.changes.inserting(len(self.rows))
        self.rows.append(row)
        self.changes.inserted()
        return row

    def add_user(self, text: str, media: list[str] | None = None, names: Mapping[str, str] | None = None) -> ChatRow:
        """The person's message as sent; `names`: what files of `media` were first sent by (InboundMessage.names)."""
        self._settle_failure()
        files = tuple(media or ())
        sent_as = tuple(names.get(path) or _file_name(path) for path in files) if names else ()
        return self.append(ChatRow(Kind.USER, text, files, sent_as))

    def _settle_failure(self) -> None:
        """Only the latest failed turn offers Retry, while nothing came after it: then it becomes a note, as a
        reload shows it."""
        for row in self.rows[-3:]:
            if row.kind is Kind.ERROR:
                row.kind, row.text = Kind.NOTICE, failed_note(row.text)
                self.touch(row)

    def touch(self, row: ChatRow, now: bool = False) -> None:
        self.changes.changed(row, now)

    def drop_after(self, row: ChatRow, *, inclusive: bool = False) -> None:
        """Redo: the rows after the last question go (Retry, Regenerate), or from it on (Edit)."""
        self.changes.resetting()
        del self.rows[self.rows.index(row) + (0 if inclusive else 1):]
        self.running.clear()
        self.changes.reset()

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

    def last_answer(self) -> ChatRow | None:
        """The latest answer row: the turn's reply once it has ended, the words streaming in while it runs."""
        return next((r for r in reversed(self.rows) if r.kind is Kind.ASSISTANT), None)

    def redoable(self) -> bool:
        """Whether the last turn is the person's question and its answer (Regenerate and Edit redo it): not
        while one runs, nor after a background result or reminder, whose turn is not theirs to redo."""
        last = self.last_user()
        return (not self.busy and last is not None
                and all(r.kind is not Kind.NOTICE for r in self.rows[self.rows.index(last) + 1:]))

    def set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.changes.busy_set(busy)

    def _set_progress(self, text: str) -> None:
        if text != self.progress:
            self.progress = text
            self.changes.progress_set()

    # -- bus events

    def apply(self, event: Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _turn_started(self, event: TurnStarted) -> None:
        self._close_streams()
        self.stopped, self._call_reasoning = False, None
        self.set_busy(True)
        started_by = _STARTED_BY.get(event.kind)
        if started_by:  # not the person: say what the answer that follows is about, as a reload will
            self.append(ChatRow(Kind.NOTICE, _headline(event.message) or started_by))

    def _taken_in(self, event: MessageTakenIn) -> None:
        """A message taken into the turn: what the turn says next is a new row, after it (the chat window adds the
        message's row when it did not show it as sent: TranscriptModel)."""
        self._close_streams()

    def _retrying(self, event: Retrying) -> None:
        self._set_progress(f"Retrying ({event.attempt} of {event.attempts})…")

    def _turn_progress(self, event: TurnProgress) -> None:
        self._set_progress(event.text)

    def _reasoning(self, event: ReasoningDelta) -> None:
        row = self._reasoning_row
        if row is None or self._text_row is not None:
            self._close_streams()
            row = self._reasoning_row = self._call_reasoning = self.append(ChatRow(Kind.REASONING, streaming=True))
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
        self._call_reasoning = None  # the call asked for tools: saved with its reasoning
        call = ToolCall(event.call_id, event.name, event.arguments, started=time.monotonic(), label=event.label,
                        summary=event.summary)
        self.running[event.call_id] = self.append(ChatRow(Kind.TOOL, tool=call))

    def _tool_progress(self, event: ToolProgress) -> None:
        row = self.running.get(event.call_id)
        if row is not None and row.tool is not None:
            row.tool.tail = event.tail
            self.touch(row)

    def _tool_awaiting(self, event: ToolAwaiting) -> None:
        row = self.running.get(event.call_id)
        if row is not None and row.tool is not None:
            row.tool.awaiting = event.awaiting
            if not event.awaiting:
                row.tool.started = time.monotonic()  # its running time starts with the answer
            self.touch(row)
        self._show_waiting()

    def _show_waiting(self) -> None:
        """The turn's status says what its step's row says: it waits for the person's answer, it is not working."""
        if any(r.tool is not None and r.tool.awaiting for r in self.running.values()):
            self._set_progress(WAITING_NOTE)
        elif self.progress == WAITING_NOTE:
            self._set_progress("")

    def _tool_finished(self, event: ToolFinished) -> None:
        row = self.running.pop(event.call_id, None)
        if row is None or row.tool is None:
            return
        row.tool.result, row.tool.ok, row.tool.seconds = event.result, event.ok, event.seconds
        self.touch(row, now=True)
        self._show_waiting()

    def _outbound(self, event: OutboundMessage) -> None:
        """A message that is not the turn's answer (the message tool, /status during a turn) stands alone; the
        app's own line (what an undo put back) is a notice, as the chat's file keeps it."""
        if not event.content:
            return
        self._close_streams()
        if event.kind is OutboundKind.NOTICE:
            self._settle_failure()
            self.append(ChatRow(Kind.NOTICE, event.content))
        else:
            self.append(ChatRow(Kind.ASSISTANT, event.content))

    def _turn_finished(self, event: TurnFinished) -> None:
        if not event.stopped and event.content:
            if self._text_row is None:  # not streamed: a command's reply, or a provider that sent it whole
                self.append(ChatRow(Kind.ASSISTANT, event.content))
            elif self._text_row.text != event.content:
                self._text_row.text = event.content  # e.g. <think> blocks stripped from the streamed text
                self.touch(self._text_row)
        if event.stopped:
            self.stopped = True
            self._drop_call_reasoning()
            if self._text_row is not None:
                self._text_row.stopped = True
                self.touch(self._text_row)
            for row in self.running.values():
                if row.tool is not None:
                    row.tool.result, row.tool.ok = INTERRUPTED, False
                    self.touch(row)
            self.running.clear()
            if self._text_row is None:
                self.append(ChatRow(Kind.NOTICE, STOPPED_NOTE))
        self._close_streams()
        self.set_busy(False)

    def _turn_error(self, event: TurnError) -> None:
        self._keep_cut_off()
        self._close_streams()
        self.append(ChatRow(Kind.ERROR, event.message, fix_in_settings=fixed_in_settings(event.kind)))
        self.set_busy(False)

    def _keep_cut_off(self) -> None:
        """A failed call's half-streamed answer stays, marked cut off (the session keeps it so, for a reload)."""
        if self._text_row is not None:
            self._text_row.cut_off = True
            self.touch(self._text_row)
        self._drop_call_reasoning()

    def _drop_call_reasoning(self) -> None:
        """A failed or stopped call's reasoning goes, as the session keeps none of it, so the chat looks the same
        live as after a reload."""
        unfinished, self._call_reasoning, self._reasoning_row = self._call_reasoning, None, None
        if unfinished is not None:
            self.changes.resetting()  # rare, and views then measure the rows afresh, as after Retry
            self.rows = [r for r in self.rows if r is not unfinished]
            self.changes.reset()

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
        self.changes.flush()


_HANDLERS: dict[type, Any] = {
    TurnStarted: Transcript._turn_started, ReasoningDelta: Transcript._reasoning,
    TextDelta: Transcript._text, ToolStarted: Transcript._tool_started,
    ToolFinished: Transcript._tool_finished, OutboundMessage: Transcript._outbound,
    TurnFinished: Transcript._turn_finished, TurnError: Transcript._turn_error,
    Retrying: Transcript._retrying, ToolProgress: Transcript._tool_progress,
    ToolAwaiting: Transcript._tool_awaiting, TurnProgress: Transcript._turn_progress,
    MessageTakenIn: Transcript._taken_in,
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
    """What the call does in its tool's words, else the one argument that says it (the command, the path, ...),
    on one line."""
    if call.summary:
        return call.summary
    args = call.arguments
    value = next((args[k] for k in _KEY_ARGUMENTS if isinstance(args.get(k), str)), None)
    if value is None:
        value = next((v for v in args.values() if isinstance(v, (str, int, float))), "")
    return " ".join(str(value).split())


def format_arguments(arguments: dict[str, Any]) -> str:
    if set(arguments) == {"_raw"}:
        return str(arguments["_raw"])
    return json.dumps(arguments, indent=2, ensure_ascii=False)


def question_row(message: dict[str, Any]) -> ChatRow:
    """The row of a saved user message: the person's words and files, or the app's message as a notice."""
    if message.get("kind", "user") != "user":  # the app's message, not the person's
        return ChatRow(Kind.NOTICE, _headline(_text_of(message.get("content"))))
    typed = message.get("typed")  # the person's words, where the content adds attached files' text
    shown = typed if isinstance(typed, str) else _text_of(message.get("content"))
    media = tuple(message.get("media") or ())
    return ChatRow(Kind.USER, shown, media, _names(message.get("names"), media))


def rows_from_messages(messages: list[dict[str, Any]]) -> list[ChatRow]:
    """Rows for a saved session: pure Python, so it can run in a worker thread."""
    rows: list[ChatRow] = []
    calls: dict[str, ToolCall] = {}
    for number, message in enumerate(messages, 1):
        first = len(rows)
        role = message.get("role")
        if role == "user":
            rows.append(question_row(message))
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
            if found is not None and message.get("stopped"):  # Stop came while it ran: as the chat showed it live
                found.result, found.ok = INTERRUPTED, False
                if rows[-1].text != STOPPED_NOTE:
                    rows.append(ChatRow(Kind.NOTICE, STOPPED_NOTE))
            elif found is not None:
                found.result = _text_of(message.get("content"))
                found.ok = bool(message.get("ok", True))
                found.label = str(message.get("label") or "")
                found.summary = str(message.get("summary") or "")
                seconds = message.get("seconds")
                found.seconds = float(seconds) if isinstance(seconds, (int, float)) else None
        for row in rows[first:]:
            row.message = number - 1
    return rows


def rows_from_task_file(raw: str) -> list[ChatRow]:
    """Rows for a background task's transcript (desktop/subagents/tasks.py writes it, one record a line): the task
    as the chat gave it, then its steps as the chat shows a turn's, then how it ended. Pure Python, for a worker
    thread; a line that is not JSON (a write cut short) is skipped."""
    messages: list[dict[str, Any]] = []
    end: dict[str, Any] | None = None
    for line in raw.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(record, dict):
            continue
        if record.get("_type") == "task":
            messages.append({"role": "user", "content": str(record.get("task", ""))})
        elif record.get("_type") == "end":
            end = record
        elif record.get("role") in ("assistant", "tool"):  # not the system prompt, nor the task as the model got it
            messages.append(record)
    rows = rows_from_messages(messages)
    said = next((r.text for r in reversed(rows) if r.kind is Kind.ASSISTANT), None)
    if end is None:
        return [*rows, ChatRow(Kind.NOTICE, "The transcript ends here: the task did not finish.")]
    status, result = str(end.get("status", "")), str(end.get("result", ""))
    if status == "done" and result and result != said:  # the report, when not the last thing it said
        rows.append(ChatRow(Kind.ASSISTANT, result))
    if status == "done":
        return [*rows, ChatRow(Kind.NOTICE, "Done.")]
    if status == "failed":
        return [*rows, ChatRow(Kind.NOTICE, f"Failed: {result}")]
    return [*rows, ChatRow(Kind.NOTICE, result or status.capitalize())]  # cancelled: its result says how


def attachment_names(row: ChatRow) -> dict[str, str]:
    """Each attachment's path and the name its chip shows: the name it was sent by, the same live (the path the
    person attached) and read again (the saved message keeps it beside the workspace copy's path)."""
    names = row.names or tuple(_file_name(path) for path in row.media)
    return dict(zip(row.media, names, strict=True))


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def _names(saved: Any, media: tuple[str, ...]) -> tuple[str, ...]:
    """The names a saved message's attachments were sent by; none (their files' own) when a hand-edited file's
    list does not match them one for one."""
    if isinstance(saved, list) and len(saved) == len(media) and all(isinstance(n, str) and n for n in saved):
        return tuple(saved)
    return ()


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
    except (json.JSONDecodeError, RecursionError):  # a model's words: shown as they came
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}

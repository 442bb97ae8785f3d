"""The memory files of a workspace: MEMORY.md, the append-only history.jsonl and the Dream cursor.

All of them live in the workspace, so they are read and written through desktop.workspace.access: a
history.jsonl that became a link or a pipe is refused (and reported), never followed or waited on."""

from __future__ import annotations

import io
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from desktop.kernel.atomic import parse_jsonl
from desktop.kernel.wellformed import well_formed
from desktop.session.session import now_iso
from desktop.workspace import access
from desktop.workspace.layout import DREAM_CURSOR_FILE, HISTORY_FILE

log = logging.getLogger(__name__)

HISTORY_KEEP = 1000  # entries kept after a Dream (unprocessed ones are always kept too)
_TAIL_BYTES = 64 * 1024



@dataclass(frozen=True)
class HistoryEntry:
    cursor: int
    timestamp: str
    session_key: str
    content: str

    def record(self) -> dict[str, Any]:
        return {"cursor": self.cursor, "timestamp": self.timestamp, "session_key": self.session_key,
                "content": self.content}

    @staticmethod
    def from_record(record: dict[str, Any]) -> HistoryEntry | None:
        """The entry of a line of history.jsonl, whose text is mended (desktop/kernel/wellformed.py): a sandboxed
        command can write the file, and a lone surrogate's escape in it once made every Dream fail."""
        cursor = record.get("cursor")
        if not isinstance(cursor, int) or isinstance(cursor, bool):
            return None
        return HistoryEntry(cursor, *(well_formed(str(record.get(key, "")))
                                      for key in ("timestamp", "session_key", "content")))


class MemoryStore:
    """All methods are blocking file I/O: call them through asyncio.to_thread from async code.

    One lock serialises appends and compaction, so cursors stay unique and increasing even when
    several sessions archive at once, and a compaction never drops a line appended meanwhile."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace  # reassigned when the settings move the workspace
        self._lock = threading.Lock()
        self._last: tuple[Path, int] | None = None  # (history file, its last cursor)

    @property
    def history_file(self) -> Path:
        """Where history.jsonl is, for messages (reading goes through `open_history`)."""
        return self.workspace / HISTORY_FILE

    def open_history(self) -> BinaryIO | None:
        """history.jsonl opened for reading; None when there is none, or when it may not be read (reported)."""
        try:
            return access.open_file(self.workspace, HISTORY_FILE)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            access.report(exc, HISTORY_FILE)
            return None

    def history_stamp(self) -> tuple[int, int] | None:
        """(size, mtime) of history.jsonl, to tell whether it changed; None when absent or refused."""
        try:
            info = access.file_stat(self.workspace, HISTORY_FILE)
        except OSError:
            return None
        return info.st_size, info.st_mtime_ns

    def append_history(self, session_key: str, content: str) -> HistoryEntry:
        with self._lock:
            path = self.history_file
            if self._last is None or self._last[0] != path:
                self._last = (path, max(self._tail_cursor(), self.dream_cursor()))
            entry = HistoryEntry(self._last[1] + 1, now_iso(), session_key, content)
            self._end_torn_line()
            with access.open_append(self.workspace, HISTORY_FILE) as fh:
                fh.write((json.dumps(entry.record(), ensure_ascii=False) + "\n").encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            self._last = (path, entry.cursor)
            return entry

    def read_history(self, since: int = 0) -> list[HistoryEntry]:
        """Entries with cursor > since, oldest first; unreadable lines (a torn last write) are skipped."""
        fh = self.open_history()
        if fh is None:
            return []
        with io.TextIOWrapper(fh, encoding="utf-8", errors="replace") as text:
            records, bad = parse_jsonl(text)
        if bad:
            log.warning("%s: skipped unreadable line(s) %s", self.history_file, bad[:5])
        entries = (HistoryEntry.from_record(r) for r in records)
        return [e for e in entries if e is not None and e.cursor > since]

    def last_cursor(self) -> int:
        with self._lock:
            return self._tail_cursor()

    def has_unprocessed(self) -> bool:
        return self.last_cursor() > self.dream_cursor()

    def dream_cursor(self) -> int:
        try:
            return int(access.read_text(self.workspace, DREAM_CURSOR_FILE, 64).strip() or 0)
        except (FileNotFoundError, NotADirectoryError, ValueError):
            return 0
        except OSError as exc:
            access.report(exc, DREAM_CURSOR_FILE)
            return 0

    def set_dream_cursor(self, cursor: int) -> None:
        access.write_text(self.workspace, DREAM_CURSOR_FILE, f"{cursor}\n")

    def compact_history(self, keep: int = HISTORY_KEEP) -> int:
        """Keep the last `keep` entries plus every one Dream has not processed; returns how many were dropped.
        Lines that are not entries (torn by a crash, broken by hand, bytes that are not UTF-8) are kept first, byte
        for byte: no Dream read them, and what is in them may still be recovered by hand."""
        with self._lock:
            fh = self.open_history()
            if fh is None:
                return 0
            with fh:
                raw = fh.read()
            entries: list[HistoryEntry] = []
            unreadable: list[bytes] = []
            for line in raw.splitlines():
                entry = _entry_of(line)
                if entry is not None:
                    entries.append(entry)
                elif line.strip():
                    unreadable.append(line + b"\n")
            processed = self.dream_cursor()
            first_unprocessed = next((i for i, e in enumerate(entries) if e.cursor > processed), len(entries))
            start = min(max(0, len(entries) - keep), first_unprocessed)
            if start == 0:
                return 0
            text = "".join(json.dumps(e.record(), ensure_ascii=False) + "\n" for e in entries[start:])
            access.write_bytes(self.workspace, HISTORY_FILE, b"".join(unreadable) + text.encode("utf-8"))
            return start

    def _tail_cursor(self) -> int:
        """The cursor of the last readable line, reading only the end of the file."""
        fh = self.open_history()
        if fh is None:
            return 0
        with fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _TAIL_BYTES))
            tail = fh.read()
        lines = tail.splitlines()
        if size > _TAIL_BYTES:
            lines = lines[1:]  # the first line of the window may be cut
        for line in reversed(lines):
            entry = _entry_of(line)
            if entry is not None:
                return entry.cursor
        if size > _TAIL_BYTES:  # one huge entry filled the window: fall back to reading everything
            entries = self.read_history()
            return entries[-1].cursor if entries else 0
        return 0

    def _end_torn_line(self) -> None:
        """After a crash mid-append the file may end without a newline: start the next record on its own line."""
        fh = self.open_history()
        if fh is None:
            return
        with fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return
            fh.seek(size - 1)
            torn = fh.read(1) != b"\n"
        if torn:
            with access.open_append(self.workspace, HISTORY_FILE) as out:
                out.write(b"\n")


def _entry_of(line: bytes) -> HistoryEntry | None:
    """The entry a line of history.jsonl holds; None for one torn, broken or not an entry's shape."""
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return HistoryEntry.from_record(record) if isinstance(record, dict) else None


def format_messages(messages: list[dict[str, Any]]) -> str:
    """Session messages as readable lines, for the summariser and for raw archives."""
    lines = []
    for message in messages:
        role = str(message.get("role", "?")).upper()
        stamp = str(message.get("timestamp", ""))[:16].replace("T", " ")
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", f"[{p.get('type', 'part')}]")) for p in content
                               if isinstance(p, dict))
        text = str(content or "").strip()
        if message.get("role") == "tool":
            role = f"TOOL {message.get('name', '')}".strip()
        calls = message.get("tool_calls") or []
        if calls:
            named = ", ".join(f"{c.get('function', {}).get('name', '?')}({c.get('function', {}).get('arguments', '')})"
                              for c in calls)
            text = f"{text}\n[calls {named}]".strip()
        lines.append(f"[{stamp}] {role}: {text}" if stamp else f"{role}: {text}")
    return "\n".join(lines)

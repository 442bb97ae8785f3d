"""The memory files of a workspace: MEMORY.md, the append-only history.jsonl and the Dream cursor."""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.atomic import append_jsonl, atomic_write_text, read_jsonl
from desktop.session import now_iso
from desktop.workspace import DREAM_CURSOR_FILE, HISTORY_FILE

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
        cursor = record.get("cursor")
        if not isinstance(cursor, int) or isinstance(cursor, bool):
            return None
        return HistoryEntry(cursor, str(record.get("timestamp", "")), str(record.get("session_key", "")),
                            str(record.get("content", "")))


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
        return self.workspace / HISTORY_FILE

    @property
    def cursor_file(self) -> Path:
        return self.workspace / DREAM_CURSOR_FILE

    def append_history(self, session_key: str, content: str) -> HistoryEntry:
        with self._lock:
            path = self.history_file
            if self._last is None or self._last[0] != path:
                self._last = (path, max(self._tail_cursor(), self.dream_cursor()))
            entry = HistoryEntry(self._last[1] + 1, now_iso(), session_key, content)
            self._end_torn_line()
            append_jsonl(path, [entry.record()])
            self._last = (path, entry.cursor)
            return entry

    def read_history(self, since: int = 0) -> list[HistoryEntry]:
        """Entries with cursor > since, oldest first; unreadable lines (a torn last write) are skipped."""
        if not self.history_file.exists():
            return []
        records, bad = read_jsonl(self.history_file)
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
            return int(self.cursor_file.read_text(encoding="utf-8").strip() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def set_dream_cursor(self, cursor: int) -> None:
        atomic_write_text(self.cursor_file, f"{cursor}\n")

    def compact_history(self, keep: int = HISTORY_KEEP) -> int:
        """Keep the last `keep` entries plus every one Dream has not processed; returns how many were dropped."""
        with self._lock:
            entries = self.read_history()
            processed = self.dream_cursor()
            first_unprocessed = next((i for i, e in enumerate(entries) if e.cursor > processed), len(entries))
            start = min(max(0, len(entries) - keep), first_unprocessed)
            if start == 0:
                return 0
            text = "".join(json.dumps(e.record(), ensure_ascii=False) + "\n" for e in entries[start:])
            atomic_write_text(self.history_file, text)
            return start

    def read_file(self, relative: str) -> str:
        path = self.workspace / relative
        return path.read_text(encoding="utf-8") if path.is_file() else ""

    def _tail_cursor(self) -> int:
        """The cursor of the last readable line, reading only the end of the file."""
        try:
            with open(self.history_file, "rb") as fh:
                size = fh.seek(0, os.SEEK_END)
                fh.seek(max(0, size - _TAIL_BYTES))
                tail = fh.read()
        except FileNotFoundError:
            return 0
        lines = tail.splitlines()
        if size > _TAIL_BYTES:
            lines = lines[1:]  # the first line of the window may be cut
        for line in reversed(lines):
            try:
                entry = HistoryEntry.from_record(json.loads(line))
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                continue
            if entry is not None:
                return entry.cursor
        if size > _TAIL_BYTES:  # one huge entry filled the window: fall back to reading everything
            entries = self.read_history()
            return entries[-1].cursor if entries else 0
        return 0

    def _end_torn_line(self) -> None:
        """After a crash mid-append the file may end without a newline: start the next record on its own line."""
        try:
            with open(self.history_file, "rb+") as fh:
                size = fh.seek(0, os.SEEK_END)
                if size == 0:
                    return
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    fh.seek(0, os.SEEK_END)
                    fh.write(b"\n")
        except FileNotFoundError:
            pass


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

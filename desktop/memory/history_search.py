"""Reading and searching history.jsonl fast enough for a viewer of 100,000 entries: the newest entries
come from the end of the file without parsing the rest, and a search streams matches in batches."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import BinaryIO

from desktop.kernel.patterns import Pattern, TooSlow
from desktop.memory.store import HistoryEntry

BATCH = 500
SEARCH_SECONDS = 10.0  # a regular expression's matching, over all entries
_BLOCK = 256 * 1024


@dataclass(frozen=True)
class Query:
    text: str = ""
    regex: bool = False
    first_day: str = ""  # "YYYY-MM-DD", inclusive; empty = open
    last_day: str = ""

    @property
    def empty(self) -> bool:
        return not self.text and not self.first_day and not self.last_day

    def matcher(self) -> Callable[[HistoryEntry], bool]:
        """Case-insensitive. Raises BadPattern for a bad regular expression (the caller shows it); its matches
        raise TooSlow once they have taken SEARCH_SECONDS (the entries are workspace text: desktop/kernel/
        patterns.py)."""
        first, last = self.first_day, self.last_day
        pattern = (Pattern(self.text, ignore_case=True, seconds=SEARCH_SECONDS)
                   if self.regex and self.text else None)
        needle = self.text.lower()  # plain text: lower() and `in` are several times faster than an IGNORECASE regex

        def matches(entry: HistoryEntry) -> bool:
            day = entry.timestamp[:10]
            if (first and day < first) or (last and day > last):
                return False
            if pattern is not None:
                return pattern.search(entry.content)
            return needle in entry.content.lower()

        return matches


def read_newest(fh: BinaryIO | None, count: int) -> list[HistoryEntry]:
    """The last `count` readable entries of an opened history.jsonl (closed here), newest first, reading
    backwards from the end of the file; [] for None (no file)."""
    if fh is None:
        return []
    data = b""
    with fh:
        position = fh.seek(0, os.SEEK_END)
        while position > 0 and data.count(b"\n") <= count:
            step = min(_BLOCK, position)
            position -= step
            fh.seek(position)
            data = fh.read(step) + data
    lines = data.split(b"\n")
    if position > 0:
        lines = lines[1:]  # the first line of the window may be cut
    newest: list[HistoryEntry] = []
    for line in reversed(lines):
        entry = _parse(line)
        if entry is not None:
            newest.append(entry)
            if len(newest) == count:
                break
    return newest


def search(entries: Sequence[HistoryEntry], query: Query, emit: Callable[[list[HistoryEntry]], None],
           cancelled: threading.Event) -> int:
    """Emit matches of `entries` (in their order) in batches; stops early when `cancelled` is set.
    Returns the number of matches found; raises TooSlow when a regular expression ran out of time (the
    matches found by then were emitted)."""
    matches = query.matcher()
    batch: list[HistoryEntry] = []
    found = 0
    try:
        for index, entry in enumerate(entries):
            if index % 2048 == 0 and cancelled.is_set():
                return found
            if matches(entry):
                batch.append(entry)
                if len(batch) >= BATCH:
                    found += len(batch)
                    emit(batch)
                    batch = []
    except TooSlow:
        if batch and not cancelled.is_set():
            emit(batch)
        raise
    if batch and not cancelled.is_set():
        found += len(batch)
        emit(batch)
    return found


def _parse(line: bytes) -> HistoryEntry | None:
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return HistoryEntry.from_record(record) if isinstance(record, dict) else None

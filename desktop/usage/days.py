"""The per-day summary kept beside the usage log (`<data>/usage-days.json`), so the Usage window and `nanobot-tray
usage` add up a year without reading a year of lines.

It holds the log's calls added up per local day, source and chat, and how far into the log that goes (the byte
after its last whole line, and that line itself, to see that the log is still the one it was built from). A read
adds what the log gained since, and saves the summary again when that was something. It is derived data only:
missing, unreadable, built in another time zone, or from a log that was replaced or cut, it is rebuilt from the
log, and the log's format is untouched (older code reads it as before). A line still being written, or torn by
a crash, is left out until a newline ends it; the writer starts its next line on a fresh one, so the torn part
then counts as one broken line, skipped.

Reading holds the interpreter lock only in short stretches (a few hundred lines parsed at once), so the GUI thread
keeps drawing while a worker thread catches up, even over a year of calls."""

from __future__ import annotations

import json
import logging
import time
from datetime import date
from pathlib import Path
from typing import Any

from desktop.kernel.atomic import atomic_write_text
from desktop.usage.records import _SOURCES, CHUNK, UsageLog, parse_values, record_from_json
from desktop.usage.report import Group, Summary, Totals, add_to, midnight

log = logging.getLogger(__name__)
FILE_NAME = "usage-days.json"
VERSION = 1
BLOCK = 256 * 1024  # bytes read at a time: splitting a block into lines is a short hold of the lock too
YIELD_EVERY = 500  # groups between explicit releases of the interpreter lock
MARK = 256  # bytes before the summarised end kept to recognise the log


def _zone() -> list[Any]:
    """What local days depend on: a summary from another time zone is rebuilt."""
    return [list(time.tzname), time.timezone, time.altzone]


class DaySummary:
    """The summary file of one usage log. Blocking: call through a thread."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.path = log_path.with_name(FILE_NAME)

    def summary(self, first: date) -> Summary:
        """Usage from local day `first` to now: the saved days, with what the log gained since added (and saved);
        built from the whole log first when there is no saved summary that still fits the log."""
        return self._summary(first, self._load() or ({}, 0, b""))

    def saved(self, first: date) -> Summary | None:
        """`summary`, when there is a saved summary that fits the log; None, at once, when there is not."""
        loaded = self._load()
        return None if loaded is None else self._summary(first, loaded)

    def from_log(self, first: date) -> Summary:
        """Usage from local day `first` read from the log's end alone: while the summary is being built, what a
        short period needs is there at once."""
        summary = Summary(first)
        for record in UsageLog(self.log_path.parent).read_since(midnight(first)):
            summary.add(record)
        return summary

    # ----- inside
    def _summary(self, first: date, loaded: tuple[dict[Group, Totals], int, bytes]) -> Summary:
        groups, end, mark = loaded
        groups, new_end, new_mark = self._catch_up(groups, end, mark)
        if new_end != end:
            self._save(groups, new_end, new_mark)
        summary = Summary(first)
        for n, (key, totals) in enumerate(groups.items()):
            if key[0] >= first:
                summary.add_group(key, totals)
            if n % YIELD_EVERY == 0:
                time.sleep(0)  # let the GUI thread take the interpreter lock at once
        return summary

    def _load(self) -> tuple[dict[Group, Totals], int, bytes] | None:
        """The saved groups and the log position they reach, if they still describe this log; else None."""
        try:
            data = json.loads(self.path.read_bytes())
            if data["version"] != VERSION or data["zone"] != _zone():
                raise ValueError("another version or time zone")
            end, mark = int(data["end"]), bytes.fromhex(data["mark"])
            with open(self.log_path, "rb") as fh:
                fh.seek(max(0, end - len(mark)))
                if fh.read(len(mark)) != mark or end < len(mark):
                    raise ValueError("the log is not the one summarised")
            groups: dict[Group, Totals] = {}
            for n, (day, source, session, *numbers) in enumerate(data["groups"]):
                groups[(date.fromordinal(day), _SOURCES[source], session)] = Totals(*numbers)
                if n % YIELD_EVERY == 0:
                    time.sleep(0)
            return groups, end, mark
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.info("rebuilding %s from the usage log: %s", self.path.name, exc)
            return None

    def _catch_up(self, groups: dict[Group, Totals], end: int, mark: bytes) -> tuple[dict[Group, Totals], int, bytes]:
        """Add the whole lines after `end`, a block at a time; the new end is after the last of them."""
        days: dict[int, date] = {}
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(end)
                rest = b""
                while block := fh.read(BLOCK):
                    block = rest + block
                    last = block.rfind(b"\n") + 1
                    rest = block[last:]
                    lines = block[:last].split(b"\n")
                    for start in range(0, len(lines), CHUNK):
                        for record in map(record_from_json, parse_values(lines[start:start + CHUNK])):
                            if record is not None:
                                add_to(groups, record, days)
                        time.sleep(0)  # let the GUI thread take the interpreter lock at once
                    end += last
                    mark = (mark + block[:last])[-MARK:]
        except FileNotFoundError:
            pass
        return groups, end, mark

    def _save(self, groups: dict[Group, Totals], end: int, mark: bytes) -> None:
        rows = [[day.toordinal(), source.value, session, t.calls, t.prompt_tokens, t.completion_tokens,
                 t.cached_tokens, t.cost_usd, t.estimated] for (day, source, session), t in groups.items()]
        text = json.dumps({"version": VERSION, "zone": _zone(), "end": end, "mark": mark.hex(), "groups": rows},
                          separators=(",", ":"))
        try:
            atomic_write_text(self.path, text)
        except OSError as exc:  # a full disk: the next read catches up again
            log.warning("could not save %s: %s", self.path, exc)


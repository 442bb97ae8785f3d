"""The usage log: one line per model call in `<data>/usage.jsonl`, appended and never rewritten.

A line holds numbers and names only (when, which work, which chat by its key, the model, tokens, cost), never
a word of any message. The reader is tolerant: a line torn by a crash, or one a person broke by hand, is
skipped and the rest still counts. Lines are appended as calls end, so the file is in time order and today's
calls are read from its end, whatever a year of history before them weighs."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.kernel.work import Source

log = logging.getLogger(__name__)
FILE_NAME = "usage.jsonl"
TAIL_BLOCK = 64 * 1024  # bytes read at a time from the end of the file


@dataclass(frozen=True)
class CallRecord:
    """One model call as the provider counted it (or as estimated, when it reported nothing)."""

    at: float  # when it ended, seconds since the epoch
    source: Source
    session: str  # the chat's key, "" for work of no chat (Dream)
    model: str
    prompt_tokens: int  # all of the prompt, the cached part included
    completion_tokens: int
    cached_tokens: int  # the part of the prompt the server read from its cache
    cost_usd: float | None  # None: no price known (a local server, a model litellm does not price)
    estimated: bool = False  # the server reported no usage: counted here with tiktoken

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"at": round(self.at, 3), "source": self.source.value, "session": self.session,
                                "model": self.model, "prompt": self.prompt_tokens,
                                "completion": self.completion_tokens, "cached": self.cached_tokens,
                                "cost": self.cost_usd}
        if self.estimated:
            data["estimated"] = True
        return data


def record_from_json(data: Any) -> CallRecord | None:
    """The record a parsed line holds; None for one that is not a record (skipped, never fatal)."""
    try:
        cost = data["cost"]
        return CallRecord(float(data["at"]), Source(data["source"]), str(data["session"]), str(data["model"]),
                          int(data["prompt"]), int(data["completion"]), int(data["cached"]),
                          None if cost is None else float(cost), bool(data.get("estimated", False)))
    except (KeyError, TypeError, ValueError):
        return None


def parse_line(line: bytes | str) -> CallRecord | None:
    if not line.strip():
        return None
    try:
        return record_from_json(json.loads(line))
    except ValueError:  # a torn or hand-broken line
        return None


class UsageLog:
    """The file, with a writer that batches: `add` returns at once and the lines reach the disk in order on a
    worker thread, so counting a call never waits for the disk."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE_NAME
        self._pending: list[CallRecord] = []
        self._writing: asyncio.Future[None] | None = None

    def add(self, record: CallRecord) -> None:
        """Queue one record for the file (call on the event loop)."""
        self._pending.append(record)
        if self._writing is None or self._writing.done():
            self._writing = asyncio.ensure_future(self._write())

    async def flush(self) -> None:
        """Wait until every record added so far is on disk (closing)."""
        while self._writing is not None and not self._writing.done():
            await asyncio.shield(self._writing)
        if self._pending:
            await self._write()

    async def _write(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(self._append, batch)
            except OSError as exc:  # a full disk: keep them for the next call's write rather than lose them
                log.warning("could not write usage to %s: %s", self.path, exc)
                self._pending[:0] = batch
                return

    def _append(self, batch: list[CallRecord]) -> None:
        """Append lines and flush them to disk, on a line of their own after a line torn by a crash."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as fh:
            end = fh.seek(0, os.SEEK_END)
            torn = end > 0 and fh.seek(end - 1) >= 0 and fh.read(1) != b"\n"
            lines = "".join(json.dumps(r.to_json()) + "\n" for r in batch)
            fh.write((("\n" if torn else "") + lines).encode())
            fh.flush()
            os.fsync(fh.fileno())

    def read_since(self, since: float) -> list[CallRecord]:
        """The records of calls that ended at `since` or later, oldest first, read from the end of the file.
        Blocking."""
        found = list(self._newest_first(since))
        found.reverse()
        return found

    def _newest_first(self, since: float) -> Iterator[CallRecord]:
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            return
        with fh:
            position = fh.seek(0, os.SEEK_END)
            rest = b""  # the start of a line whose beginning lies in the block before
            while position > 0:
                step = min(TAIL_BLOCK, position)
                position -= step
                fh.seek(position)
                lines = (fh.read(step) + rest).split(b"\n")
                rest = lines.pop(0) if position > 0 else b""
                for line in reversed(lines):
                    record = parse_line(line)
                    if record is None:
                        continue
                    if record.at < since:
                        return
                    yield record

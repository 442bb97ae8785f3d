"""The usage log: one line per model call in `<data>/usage.jsonl`, appended and never rewritten.

A line holds numbers and names only (when, which work, which chat by its key, the model, tokens, cost, and for a
call of a chat's turn the place in that chat of the message it answers), never a word of any message. The
reader is tolerant: a line torn by a crash, or one a person broke by hand, is skipped and the rest still counts.
Lines are appended as calls end, so the file is in time order and today's calls are read from its end, whatever
a year of history before them weighs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import math
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

from desktop.kernel.atomic import append_jsonl
from desktop.kernel.work import Source

log = logging.getLogger(__name__)
FILE_NAME = "usage.jsonl"
TAIL_BLOCK = 64 * 1024  # bytes read at a time from the end of the file
CHUNK = 400  # lines parsed in one go
_SOURCES = {source.value: source for source in Source}  # Source(text) is slow over a year of lines
LAST_TIME = 253402214400.0  # 9999-12-31: a later time (or a NaN) is no call's, and no date can show it


class CallRecord(NamedTuple):
    """One model call as the provider counted it (or as estimated, when it reported nothing). A tuple: a year
    of them is made in a fraction of the time dataclasses take."""

    at: float  # when it ended, seconds since the epoch
    source: Source
    session: str  # the chat's key, "" for work of no chat (Dream)
    model: str
    prompt_tokens: int  # all of the prompt, the cached part included
    completion_tokens: int
    cached_tokens: int  # the part of the prompt the server read from its cache
    cost_usd: float | None  # None: no price known (a local server, a model litellm does not price)
    estimated: bool = False  # the server reported no usage: counted here with tiktoken
    # A call of a chat's turn: the index, in the chat's saved messages, of the person's (or a reminder's, a
    # task report's) message it answers, which ties it to the answer shown under that message; -1 for none.
    question: int = -1

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
        if self.question >= 0:
            data["question"] = self.question
        return data


def record_from_json(data: Any) -> CallRecord | None:
    """The record a parsed line holds; None for one that is not a record (skipped, never fatal)."""
    try:
        cost = data["cost"]
        record = CallRecord(float(data["at"]), _SOURCES[data["source"]], str(data["session"]), str(data["model"]),
                            int(data["prompt"]), int(data["completion"]), int(data["cached"]),
                            None if cost is None else float(cost), bool(data.get("estimated", False)),
                            int(data.get("question", -1)))
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):  # 1e400 is an infinite float
        return None
    # numbers no call has (a line edited by hand): a NaN or a far time would stop every sum that met it
    if not (0 <= record.at < LAST_TIME and min(record.prompt_tokens, record.completion_tokens,
                                               record.cached_tokens) >= 0
            and (record.cost_usd is None or 0 <= record.cost_usd < math.inf)):
        return None
    return record


def parse_line(line: bytes) -> CallRecord | None:
    if not line.strip():
        return None
    try:
        return record_from_json(json.loads(line))
    except ValueError:  # a torn or hand-broken line
        return None


def parse_lines(lines: list[bytes]) -> list[CallRecord]:
    """The records among `lines`, a few hundred at a time: one JSON array each, several times faster than one
    parse per line, yet a short hold of the interpreter lock, so a GUI thread beside the reading keeps drawing;
    line by line in a group with a torn or broken line, which costs only itself."""
    records: list[CallRecord] = []
    for start in range(0, len(lines), CHUNK):
        records += [r for r in map(record_from_json, parse_values(lines[start:start + CHUNK])) if r is not None]
        time.sleep(0)  # on a worker thread: let the GUI thread take the interpreter lock at once
    return records


def parse_values(lines: list[bytes]) -> list[Any]:
    """The JSON values of `lines`: as one array when all are whole, line by line when one is not."""
    kept = [line for line in lines if line.strip()]
    try:
        values: list[Any] = json.loads(b"[" + b",".join(kept) + b"]")
        return values
    except ValueError:
        values = []
        for line in kept:
            try:
                values.append(json.loads(line))
            except ValueError:
                continue
        return values


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
        append_jsonl(self.path, [r.to_json() for r in batch], escaped=True)

    def read_since(self, since: float) -> list[CallRecord]:
        """The records of calls that ended at `since` or later, oldest first. Blocking: call through a thread.
        Only the end of the file that holds them is read: blocks are looked at backwards, by the time of their
        first whole line, until one starts before `since`."""
        try:
            with open(self.path, "rb") as fh:
                position = fh.seek(0, os.SEEK_END)
                while position > 0:
                    position = max(0, position - TAIL_BLOCK)
                    fh.seek(position)
                    lines = fh.read(TAIL_BLOCK).split(b"\n")
                    first = next((r for r in map(parse_line, lines[1 if position else 0:]) if r is not None), None)
                    if first is not None and first.at < since:
                        break
                fh.seek(position)
                lines = [line for line in io.BytesIO(fh.read())]  # a line at a time: no long hold of the lock
        except FileNotFoundError:
            return []
        except OSError as exc:  # a folder in its place: the app still starts, counting from nothing
            log.warning("could not read usage from %s: %s", self.path, exc)
            return []
        if position:
            lines.pop(0)  # the end of a line that starts before the block
        return [r for r in parse_lines(lines) if r.at >= since]

"""Crash-safe file writes: a crash at any instant leaves the old or the new file, never half."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

YIELD_EVERY = 500  # lines between explicit releases of the interpreter lock while reading big files


def atomic_write_text(path: Path, text: str) -> None:
    """Write via temp file + fsync + rename so readers never see a partial file."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """`atomic_write_text` for bytes (a screenshot)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def append_jsonl(path: Path, records: list[dict[str, Any]], *, escaped: bool = False) -> None:
    """Append records as JSON lines and flush them to disk; a crash loses at most the last line. `escaped`: every
    character past ASCII as its JSON escape, so a file name that is not UTF-8 (a lone surrogate in Python) is kept
    exactly, for a file that must name files as the OS does. After a line torn by a crash (no newline at the end)
    the records start on a line of their own: glued to the torn one, the first of them would be unreadable too,
    and lost at the next start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=escaped) + "\n" for r in records).encode("utf-8")
    with open(path, "a+b") as fh:
        end = fh.seek(0, os.SEEK_END)
        if end and fh.seek(end - 1) >= 0 and fh.read(1) != b"\n":
            data = b"\n" + data
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    """Read JSON lines tolerantly: return the good records and the line numbers that were skipped."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return parse_jsonl(fh)


def parse_jsonl(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[int]]:
    """`read_jsonl` over lines already opened (a workspace file is opened through desktop.workspace.access)."""
    records: list[dict[str, Any]] = []
    bad: list[int] = []
    for number, line in enumerate(lines, 1):
        if number % YIELD_EVERY == 0:
            time.sleep(0)  # on a worker thread: let the GUI thread take the interpreter lock
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad.append(number)
            continue
        if isinstance(value, dict):
            records.append(value)
        else:
            bad.append(number)
    return records, bad


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

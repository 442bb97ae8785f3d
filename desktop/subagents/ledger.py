"""The background tasks whose chats have not yet been told what became of them, kept on disk while the app runs,
so that after a crash (or a power cut) the next start can still say it in each chat: without it, a task's chat
keeps "I started that in the background" and the person waits for a result that never comes. A quit says it at
once (desktop/subagents/tasks.py) and leaves no ledger behind.

One file per running process, `open-<pid>.json` in the subagents folder: the tray app and a `nanobot-tray agent -m`
share the data folder, and neither may take the other's running tasks for those of a process that died."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.kernel.atomic import atomic_write_text, read_jsonl

log = logging.getLogger(__name__)
PREFIX = "open-"


@dataclass(frozen=True)
class Left:
    """A task a process that died had not settled in its chat, and how its transcript says it ended."""

    id: str
    label: str
    task: str
    origin: str
    began: bool  # it had started working (it has a transcript)
    status: str = ""  # done, failed or cancelled; "" when the transcript has no end (it was cut off)
    result: str = ""


def ledger_of(directory: Path) -> Path:
    """This process's ledger."""
    return directory / f"{PREFIX}{os.getpid()}.json"


def write(path: Path, entries: list[dict[str, str]]) -> None:
    """Keep `entries` (id, label, task, origin of each task); none: the ledger goes. Blocking."""
    if entries:
        atomic_write_text(path, json.dumps(entries, ensure_ascii=False))
    else:
        path.unlink(missing_ok=True)


def left_behind(directory: Path) -> list[tuple[Path, list[Left]]]:
    """The ledgers of processes that are gone, each with its tasks as their transcripts say they ended. Blocking.
    One that cannot be read is skipped and logged (and removed with the others: it would be skipped every time)."""
    found: list[tuple[Path, list[Left]]] = []
    for path in sorted(directory.glob(f"{PREFIX}*.json")):
        pid = path.stem.removeprefix(PREFIX)
        if not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            entries = json.loads(path.read_text(encoding="utf-8"))
            found.append((path, [_left(directory, entry) for entry in entries]))
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("the background tasks' ledger %s could not be read: %s", path, exc)
            found.append((path, []))
    return found


def _left(directory: Path, entry: dict[str, str]) -> Left:
    ident = str(entry["id"])
    transcript = directory / f"{ident}.jsonl"
    try:
        records, _ = read_jsonl(transcript)
    except FileNotFoundError:
        return Left(ident, str(entry["label"]), str(entry["task"]), str(entry["origin"]), began=False)
    end: dict[str, Any] = next((r for r in reversed(records) if r.get("_type") == "end"), {})
    return Left(ident, str(entry["label"]), str(entry["task"]), str(entry["origin"]), began=True,
                status=str(end.get("status") or ""), result=str(end.get("result") or ""))


def _alive(pid: int) -> bool:
    """Whether a process of this number runs (this one included); a number reused since is taken as alive, so at
    worst a line is not said, never said for a task that still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""What each turn changed, one JSON line per turn in the data folder, append-only: a turn's line, later a line
saying it was undone, or that /new moved its chat to another key. A torn last line (a crash) is skipped.
Retention (`keep_only`) rewrites it whole with the turns kept, atomically: a crash leaves the old file or the
new one, never a part."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.kernel.atomic import append_jsonl, atomic_write_text, read_jsonl

log = logging.getLogger(__name__)

State = tuple[str, int] | None  # (digest, mode) of a path, or None: it did not exist


@dataclass(frozen=True)
class Change:
    path: str
    before: State
    after: State

    @property
    def verb(self) -> str:
        """How a person would say what the turn did to it."""
        return "created" if self.before is None else "deleted" if self.after is None else "modified"


@dataclass
class TurnChanges:
    """The files one turn (or background task) changed in the workspace."""

    id: str
    chat: str  # the session key of the chat it belongs to
    workspace: str
    message: int  # the index of the turn's user message in the chat (-1 for a background task)
    label: str  # what the person asked, shortened, or the background task's label
    at: str
    changes: list[Change]
    undone: bool = False

    @property
    def files(self) -> list[Change]:
        """The files (not folders) it changed, by path."""
        return sorted((c for c in self.changes if not _is_dir(c)), key=lambda c: c.path)


def _is_dir(change: Change) -> bool:
    return any(s is not None and s[0] == "dir" for s in (change.before, change.after))


@dataclass
class Journal:
    path: Path
    turns: list[TurnChanges] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> Journal:
        journal = cls(path)
        if not path.exists():
            return journal
        try:
            records, bad = read_jsonl(path)
        except OSError as exc:  # a folder in its place: the app still starts, with no turn to undo
            log.warning("%s could not be read (%s); no earlier turn can be undone", path, exc)
            return journal
        if bad:
            log.warning("%s: skipped %d unreadable line(s)", path, len(bad))
        by_id: dict[str, TurnChanges] = {}
        for record in records:
            journal._apply(record, by_id)
        return journal

    def of(self, chat: str) -> list[TurnChanges]:
        return [t for t in self.turns if t.chat == chat]

    async def add(self, turn: TurnChanges) -> None:
        """Kept in this run even when writing it fails (the OSError is raised): it can still be undone until then."""
        self.turns.append(turn)
        await self._write(_record(turn))

    async def keep_only(self, kept: list[TurnChanges]) -> None:
        """Forget every turn but `kept` (in the file too), if that forgets any."""
        if len(kept) == len(self.turns):
            return
        self.turns = list(kept)
        lines = [line for turn in kept for line in ([_record(turn)] + ([{"undone": turn.id}] if turn.undone else []))]
        text = "".join(json.dumps(line) + "\n" for line in lines)  # escaped: see `_write`
        await asyncio.to_thread(atomic_write_text, self.path, text)

    async def mark_undone(self, turn: TurnChanges) -> None:
        turn.undone = True
        await self._write({"undone": turn.id})

    async def move(self, old: str, new: str) -> None:
        """/new gave the chat's conversation a key of its own: its turns go with it."""
        if any(t.chat == old for t in self.turns):
            self._apply({"moved": old, "to": new}, {})
            await self._write({"moved": old, "to": new})

    async def _write(self, record: dict[str, Any]) -> None:
        """Escaped: a path that is not UTF-8 (a sandboxed command can name a file so) is kept as the OS names it,
        which an undo needs; its line could not be written at all before, and the turn's changes were lost."""
        await asyncio.to_thread(append_jsonl, self.path, [record], escaped=True)

    def _apply(self, record: dict[str, Any], by_id: dict[str, TurnChanges]) -> None:
        try:
            if "turn" in record:
                turn = TurnChanges(str(record["turn"]), str(record["chat"]), str(record["workspace"]),
                                   int(record["message"]), str(record["label"]), str(record["at"]),
                                   [Change(str(p), _state(b), _state(a)) for p, b, a in record["changes"]])
                self.turns.append(turn)
                by_id[turn.id] = turn
            elif "undone" in record and record["undone"] in by_id:
                by_id[record["undone"]].undone = True
            elif "moved" in record:
                for turn in self.turns:
                    if turn.chat == record["moved"]:
                        turn.chat = str(record["to"])
        except (KeyError, TypeError, ValueError) as exc:
            log.warning("%s: skipped a record it does not understand (%s)", self.path, exc)


def _record(turn: TurnChanges) -> dict[str, Any]:
    return {"turn": turn.id, "chat": turn.chat, "workspace": turn.workspace, "message": turn.message,
            "label": turn.label, "at": turn.at, "changes": [[c.path, c.before, c.after] for c in turn.changes]}


def _state(raw: Any) -> State:
    return None if raw is None else (str(raw[0]), int(raw[1]))

"""Chat sessions as JSONL files: metadata first line, then one message per line. A branch's file holds only its
own messages: the start it shares with its parent is read from the parent's file (desktop/session/branches.py)."""

from __future__ import annotations

import asyncio
import builtins
import copy
import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from desktop.kernel.atomic import append_jsonl, atomic_write_text, read_jsonl
from desktop.session import alternatives
from desktop.session.branches import (
    BRANCH_OF,
    SHARED_SHOWN,
    branch_end,
    branch_metadata,
    parent_of,
    shared_count,
    unlink,
)

log = logging.getLogger(__name__)

# Keys a provider accepts on a message; everything else (timestamps, UI flags) stays local.
MODEL_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content")
CUT_OFF = "Interrupted: the app stopped before this tool finished."
ROLES = ("system", "user", "assistant", "tool")
NAME_MAX = 255  # characters in one file name (bytes on Linux and macOS); a quoted key is all ASCII


def file_name(key: str) -> str:
    """The chat's file name in the sessions folder: any key, one name, reversible (`unquote`)."""
    return f"{quote(key, safe='')}.jsonl"


def fits(key: str) -> bool:
    """Whether the chat's file name is short enough to exist. The app makes only short keys; one typed on the
    command line (`agent -s`) is checked with this before its turn, which could neither load nor save it."""
    return len(file_name(key)) <= NAME_MAX


def now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


class ChatNotSaved(OSError):
    """A chat's file refused a write (a full disk, a folder where the file goes): the turn ends saying so, and
    the message is not shown as kept."""


@dataclass
class Session:
    key: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    deleted: bool = False  # set by SessionStore.delete: whatever still holds it (a turn, a hook) no longer saves
    # A branch: the messages read from its parent, by identity. While `messages` still starts with exactly these,
    # a save writes only what follows them; once a Retry or a repair changed them, it writes the whole history.
    shared_ids: tuple[int, ...] = field(default=(), repr=False)
    # Lines of its file that could not be read (torn by a crash, not UTF-8, not a message's shape): left out of
    # the chat, and kept in a copy of the file before a rewrite would drop them (`SessionStore._write`).
    unreadable: int = field(default=0, repr=False)

    @property
    def last_consolidated(self) -> int:
        return int(self.metadata.get("last_consolidated", 0))

    @property
    def title(self) -> str:
        return str(self.metadata.get("title") or self.key)

    def history(self) -> list[dict[str, Any]]:
        """The unconsolidated messages in provider form, starting at a user turn."""
        recent = self.messages[self.last_consolidated:]
        start = next((i for i, m in enumerate(recent) if m.get("role") == "user"), len(recent))
        return [{k: m[k] for k in MODEL_KEYS if k in m} for m in recent[start:]]


@dataclass
class SessionInfo:
    key: str
    title: str
    updated_at: str
    message_count: int  # the messages the person sees as such (`shown_as_message`), not every line of the file
    pinned: bool = False  # kept at the top of the chat list (desktop/session/pins.py)
    branch_of: str = ""  # the chat it branched from, while it reads its start from that chat


class SessionStore:
    """Loads and saves sessions. File I/O runs in a worker thread so the GUI thread never waits on disk."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._cache: dict[str, Session] = {}
        self._write_locks: dict[str, asyncio.Lock] = {}  # an append must never land in a file being replaced
        # What `_peek` read of each file not loaded, by the file's identity (inode, change time, size): counting
        # messages reads every line, and the list is read on every turn; only a file that changed is read again.
        self._peeked: dict[Path, tuple[tuple[int, int, int], dict[str, Any], int]] = {}
        # Told (chat key, the copy) when a chat file with unreadable lines was copied aside before a rewrite.
        self.on_damaged: Callable[[str, Path], None] = lambda key, copy: None

    def path_for(self, key: str) -> Path:
        return self.directory / file_name(key)

    async def load(self, key: str) -> Session:
        """The chat's one live Session (read from its file the first time). Reading holds the chat's write lock:
        two loads at once (the window opening a chat as its first message is sent) read it once, and a read
        never lands after a write or a delete that happened meanwhile, which would replace the live session."""
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        async with self._write_lock(key):
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            session, closed = await asyncio.to_thread(self._read_closed, key)
            self._cache[key] = session
        if closed:
            log.warning("session %s: closed tool calls left without a result (the app stopped mid-tool)", key)
            await self.rewrite(session)  # saved, so every later request carries a valid history
        return session

    def _read_closed(self, key: str) -> tuple[Session, int]:
        """The chat read, its dangling tool calls closed (`load`): both in the reading thread, since a long chat
        takes the walk 10 ms per 10,000 messages, which the event loop (the GUI's) would wait for."""
        session = self._read(key)
        return session, close_dangling_calls(session.messages)

    async def snapshot(self, key: str) -> Session:
        """A chat as it stands, to read out (a backup of every chat): the live one's messages when it is loaded,
        else read from its file and not kept, so reading a hundred chats leaves none of them in memory."""
        async with self._write_lock(key):
            cached = self._cache.get(key)
            if cached is not None:
                return Session(key, list(cached.messages), dict(cached.metadata))
            return await asyncio.to_thread(self._read, key)

    def title_of(self, key: str) -> str:
        """The title of a loaded session, else its key (no disk access: safe on the GUI thread)."""
        cached = self._cache.get(key)
        return cached.title if cached is not None else key

    async def append(self, session: Session, *messages: dict[str, Any]) -> None:
        """Add messages to the session and the end of its file (flushed, so a crash keeps them)."""
        for message in messages:
            message.setdefault("timestamp", now_iso())
        path = self.path_for(session.key)
        async with self._write_lock(session.key):
            if session.deleted:
                return
            session.metadata["updated_at"] = now_iso()
            records = list(messages)
            if not path.exists():
                records.insert(0, self._metadata_record(session))
            # On disk first: the open chat shows only what its file keeps, and the next write leaves no gap. A
            # thread's write cannot be stopped, so a Stop landing meanwhile waits for it and keeps what it wrote.
            writing = asyncio.ensure_future(asyncio.to_thread(append_jsonl, path, records))
            stopped = False
            while not writing.done():
                try:
                    await asyncio.wait([writing])  # its failure is taken below, not raised here
                except asyncio.CancelledError:
                    stopped = True
            if (failed := writing.exception()) is not None:
                if isinstance(failed, OSError):
                    raise ChatNotSaved(f"The chat could not be saved to {path}: {failed.strerror or failed}") \
                        from failed
                raise failed
            session.messages.extend(messages)
            if stopped:
                raise asyncio.CancelledError

    async def rewrite(self, session: Session, *, active: bool = True) -> None:
        """Replace the whole file atomically (metadata changes, clearing, deleting messages). `active=False`: a
        change to how the chat is filed (a pin, a new name), which leaves when it was last active as it was."""
        async with self._write_lock(session.key):
            if session.deleted:
                return
            if active:
                session.metadata["updated_at"] = now_iso()
            await self._keep_branches(session.key, session.messages)
            await self._write(session)

    async def drop_last_turn(self, session: Session, asked: str | None = None) -> list[dict[str, Any]]:
        """Retry, Regenerate, Edit: the person asked for the last turn (from its question on) to be replaced by
        the question `asked`; returns what was dropped. Asked again as it was, the answer it had is kept as an
        alternative (desktop/session/alternatives.py). A turn already archived into memory stays."""
        messages = session.messages
        start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=len(messages))
        if start < session.last_consolidated:
            return []
        dropped = session.messages[start:]
        alternatives.keep(session.metadata, dropped, start, asked)
        del session.messages[start:]
        await self.rewrite(session)
        return dropped

    async def set_aside(self, session: Session) -> str:
        """/new: the conversation moves, object and file, to a fresh key of the same channel, so it stays
        listed and openable, and its old key starts empty. The move is a rename (atomic); returns the old key."""
        old = session.key
        async with self._write_lock(old):
            new = f"{old.partition(':')[0]}:{uuid.uuid4().hex[:8]}"
            path = self.path_for(old)
            if path.exists():
                await asyncio.to_thread(os.replace, path, self.path_for(new))
            session.key = new
            self._cache[new] = self._cache.pop(old, session)
            for child, _shared in await asyncio.to_thread(self._children, old):  # they read their start from it
                await self._relink(child, new)
        await self.rewrite(session)  # its metadata line names the new key
        return old

    async def delete(self, key: str) -> None:
        """The person deleted the chat: its file goes, and a turn or an after-turn hook still running with it
        (its answer, a consolidation) can no longer write the file back, so the chat never returns."""
        async with self._write_lock(key):
            await self._keep_branches(key, None)  # first: a crash in between leaves both, never a branch without
            cached = self._cache.pop(key, None)
            if cached is not None:
                cached.deleted = True
            await asyncio.to_thread(self.path_for(key).unlink, True)
            self._peeked.pop(self.path_for(key), None)

    async def branch(self, parent_key: str, upto: int, key: str) -> Session:
        """A new chat `key` whose history is the parent's first `upto` messages (with the results of a step cut
        there); stored once: its file holds the link, its messages are read from the parent's file."""
        parent = await self.load(parent_key)
        async with self._write_lock(parent_key):  # the parent's messages do not change while they are copied
            shared = branch_end(parent.messages, upto)
            prefix = copy.deepcopy(parent.messages[:shared])  # its own objects: a change to one never shows in both
            metadata = branch_metadata(parent_key, parent.metadata, shared, sum(map(shown_as_message, prefix)))
        session = self._cache[key] = Session(key, prefix, metadata, shared_ids=tuple(map(id, prefix)))
        await self.rewrite(session)
        return session

    async def list(self) -> list[SessionInfo]:
        """Every saved session, most recently active first."""
        return await asyncio.to_thread(self._list)

    async def _write(self, session: Session) -> None:
        """Replace the chat's file with `session` (holding its write lock). A file with lines that could not be
        read is copied aside first (`<file>.damaged-<time>`) and the copy named: the rewrite leaves them out,
        and what is in them may still be recovered by hand."""
        path = self.path_for(session.key)
        if session.unreadable:
            copy = await asyncio.to_thread(_keep_damaged, path)
            session.unreadable = 0
            if copy is not None:
                log.warning("session %s had unreadable lines; the file as it was is kept as %s", session.key, copy)
                self.on_damaged(session.key, copy)
        await asyncio.to_thread(_write_records, path, self._records(session))

    def _write_lock(self, key: str) -> asyncio.Lock:
        return self._write_locks.setdefault(key, asyncio.Lock())

    def _metadata_record(self, session: Session) -> dict[str, Any]:
        session.metadata.setdefault("created_at", now_iso())
        return {"_type": "metadata", "key": session.key, **session.metadata}

    def _records(self, session: Session) -> builtins.list[dict[str, Any]]:
        """The session's file: its metadata line and its messages, without the start a branch reads from its
        parent while that start is what it read (else the branch now keeps its whole history itself)."""
        messages = session.messages
        if parent_of(session.metadata):
            ids = session.shared_ids
            if len(messages) >= len(ids) and all(id(m) == i for m, i in zip(messages, ids, strict=False)):
                messages = messages[len(ids):]
            else:
                unlink(session.metadata)
                session.shared_ids = ()
        return [self._metadata_record(session), *messages]

    async def _keep_branches(self, key: str, messages: builtins.list[dict[str, Any]] | None) -> None:
        """Before chat `key` is rewritten with `messages` (None: deleted), every branch whose shared start would
        change with it gets that start written into its own file. Called holding `key`'s lock."""
        children = await asyncio.to_thread(self._children, key)
        if not children:
            return
        old = (await asyncio.to_thread(self._read, key)).messages  # what the branches read until now
        for child, shared in children:
            if messages is None or messages[:shared] != old[:shared]:
                await self._materialise(child, old[:shared])

    async def _materialise(self, key: str, prefix: builtins.list[dict[str, Any]]) -> None:
        """Branch `key` keeps its whole history in its own file (written atomically) and no longer needs its
        parent."""
        async with self._write_lock(key):
            session = self._cache.get(key)
            if session is None:
                session = await asyncio.to_thread(self._read_own, key)
                session.messages[:0] = prefix[:shared_count(session.metadata)]
            if not parent_of(session.metadata):
                return
            unlink(session.metadata)
            session.shared_ids = ()
            await self._write(session)

    async def _relink(self, key: str, parent: str) -> None:
        """Branch `key`'s parent now lives under the key `parent` (/new moved it)."""
        async with self._write_lock(key):
            session = self._cache.get(key)
            if session is None:
                session = await asyncio.to_thread(self._read_own, key)
            session.metadata[BRANCH_OF] = parent
            await self._write(session)

    def _children(self, key: str) -> builtins.list[tuple[str, int]]:
        """The branches that read their start from chat `key`, with how many messages each shares (in a worker
        thread; files not loaded are read once per change, as for the list)."""
        children = []
        for path in self.directory.glob("*.jsonl"):
            child = unquote(path.stem)
            cached = self._cache.get(child)
            try:
                meta = cached.metadata if cached is not None else self._peek_changed(path)[0]
            except OSError:  # deleted meanwhile
                continue
            if child != key and parent_of(meta) == key:
                children.append((child, shared_count(meta)))
        return children

    def _read(self, key: str, seen: frozenset[str] = frozenset()) -> Session:
        """The whole chat: a branch's start read from its parent (and so on up). A branch whose parent's file
        is missing keeps what it has, as a chat of its own."""
        session = self._read_own(key)
        parent = parent_of(session.metadata)
        if not parent:
            return session
        shared = shared_count(session.metadata)
        prefix = [] if parent in seen or not self.path_for(parent).exists() else \
            self._read(parent, seen | {key}).messages[:shared]
        if len(prefix) < shared or parent in seen:
            log.warning("session %s: its start was to be read from %s, which has no longer got it", key, parent)
            unlink(session.metadata)
            return session
        session.messages[:0] = prefix
        session.shared_ids = tuple(map(id, prefix))
        return session

    def _read_own(self, key: str) -> Session:
        """The chat's file alone (a branch's own messages, without the start it shares)."""
        path = self.path_for(key)
        session = Session(key)
        if not path.exists():
            return session
        records, bad = read_jsonl(path)
        session.unreadable = len(bad)
        for record in records:
            if record.get("_type") == "metadata":
                session.metadata = {k: v for k, v in record.items() if k not in ("_type", "key")}
            elif well_shaped(record):
                session.messages.append(record)
            elif "role" in record:
                session.unreadable += 1
        consolidated = session.metadata.get("last_consolidated", 0)
        if type(consolidated) is not int or consolidated < 0:  # a hand edit: every turn of the chat failed on it
            session.metadata.pop("last_consolidated")
            session.unreadable += 1
        if session.unreadable:
            log.warning("session %s: skipped %d unreadable line(s) or value(s) (a crash mid-write, a hand edit)",
                        path, session.unreadable)
        if session.messages:
            session.metadata["updated_at"] = _later(session.metadata.get("updated_at"),
                                                    session.messages[-1].get("timestamp"))
        return session

    def _list(self) -> builtins.list[SessionInfo]:
        infos = []
        for path in self.directory.glob("*.jsonl"):
            key = unquote(path.stem)
            cached = self._cache.get(key)
            if cached is not None:
                meta, count = cached.metadata, sum(map(shown_as_message, cached.messages))
            else:
                meta, count = self._peek_changed(path)
                count += int(meta.get(SHARED_SHOWN, 0)) if parent_of(meta) else 0
            infos.append(SessionInfo(key, str(meta.get("title") or key), str(meta.get("updated_at", "")), count,
                                     meta.get("pinned") is True, parent_of(meta)))
        return sorted(infos, key=lambda i: i.updated_at, reverse=True)

    def _peek_changed(self, path: Path) -> tuple[dict[str, Any], int]:
        """`_peek(path)`, read again only when the file changed (a listing runs in a worker thread; two at once
        at worst read a file twice)."""
        stat = path.stat()
        identity = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        known = self._peeked.get(path)
        if known is not None and known[0] == identity:
            return known[1], known[2]
        meta, count = _peek(path)
        self._peeked[path] = (identity, meta, count)
        return meta, count


def well_shaped(message: dict[str, Any]) -> bool:
    """Whether a saved message has a message's shape, so it can be shown and sent to a model. One that has not
    (a hand edit: a number for its text, a string for its tool calls) made the chat fail to open or every turn
    in it fail; it is left out like a line torn by a crash."""
    if message.get("role") not in ROLES or not isinstance(message.get("content"), str | list | None):
        return False
    calls = message.get("tool_calls")
    return calls is None or isinstance(calls, list) and all(
        isinstance(call, dict) and isinstance(call.get("function"), dict) for call in calls)


def close_dangling_calls(messages: list[dict[str, Any]]) -> int:
    """Give every assistant tool call without a result (a crash or kill mid-tool) an 'interrupted' one, right
    after its call, as /stop does: providers refuse a history with an unanswered call. Returns how many."""
    fixed: list[dict[str, Any]] = []
    closed = 0
    i = 0
    while i < len(messages):
        message = messages[i]
        fixed.append(message)
        i += 1
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not isinstance(calls, list) or not calls:
            continue
        answered = set()
        while i < len(messages) and messages[i].get("role") == "tool":
            answered.add(messages[i].get("tool_call_id"))
            fixed.append(messages[i])
            i += 1
        for call in calls:
            if isinstance(call, dict) and call.get("id") not in answered:
                name = str((call.get("function") or {}).get("name", ""))
                fixed.append({"role": "tool", "tool_call_id": call.get("id"), "name": name, "content": CUT_OFF,
                              "ok": False, "timestamp": now_iso()})
                closed += 1
    if closed:
        messages[:] = fixed
    return closed


def _keep_damaged(path: Path) -> Path | None:
    """A copy of the chat's file as it is, beside it, named for now; None when there is no file."""
    if not path.exists():
        return None
    copy = path.with_name(f"{path.name}.damaged-{datetime.now():%Y%m%d-%H%M%S}")
    shutil.copy2(path, copy)
    return copy


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Serialised in the worker thread too: a long session takes a while to encode."""
    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def shown_as_message(message: dict[str, Any]) -> bool:
    """Whether the person sees a saved message as one of the chat's messages: their own, or an answer of the
    assistant (a failed turn's by the part of it that came). A tool call and its result are steps of a turn, and
    a background task's report or a due reminder is the app's note: neither counts."""
    role = message.get("role")
    if role == "user":
        return message.get("kind", "user") == "user"
    if role != "assistant":
        return False
    return bool(message.get("partial") if message.get("failed") else message.get("content"))


def _peek(path: Path) -> tuple[dict[str, Any], int]:
    """Metadata and the count of messages the person sees, the metadata line kept as it was written. Appends
    never rewrite the metadata line, so the newest message's time says when the chat was last active."""
    meta: dict[str, Any] = {}
    count = 0
    newest: dict[str, Any] | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:  # torn by a crash mid-write
                record = None
            if not isinstance(record, dict):
                newest = None
                continue
            if number == 0 and record.get("_type") == "metadata":
                meta = record
                continue
            count += shown_as_message(record)
            newest = record
    if newest is not None:
        meta = {**meta, "updated_at": _later(meta.get("updated_at"), newest.get("timestamp"))}
    return meta, count


def _later(a: object, b: object) -> str:
    """The later of two ISO times as saved (either may be missing or unreadable)."""
    times = []
    for value in (a, b):
        try:
            times.append((datetime.fromisoformat(str(value)), str(value)))
        except ValueError:
            continue
    if not times:
        return str(a or "")
    return max(times, key=lambda t: t[0].timestamp())[1]

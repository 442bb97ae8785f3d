"""Checkpoints: what each turn changed in the workspace, and undoing it.

Why it works this way. A turn changes files through the file tools but also through `exec`, which can change
anything, so the app cannot copy a file just before it changes: it does not see that moment. Instead it keeps,
in the data folder (hidden from the sandbox), a copy of every workspace file as the last look saw it, by
content (desktop/checkpoints/blobs.py), and a manifest of path -> (digest, mode, size, times, inode). Every look
(desktop/checkpoints/scan.py) `lstat`s every name and reads only the files whose stat figures changed (or that
changed so shortly before the previous look that a rewrite might not show in them), keeping their new content:
the first look copies the workspace once (a reflink where the file system can, which costs neither time nor
space), every later one costs a stat per file plus the files that changed. So the content of any file a turn
changes is already kept when the turn starts: either the previous look kept it, or the look at the turn's start
does. The manifest is saved for the next run once the looks go quiet and when the app closes, not per look.

Looks happen when a turn or background task starts and when it ends, one at a time. What changed between two
looks is put down to every turn that was running at some point between them (nothing running: the person's own
edits). A turn's tools wait until the look at its start is done (a tool gate), which runs while the model
composes its first answer, so the look adds nothing to the turn unless the model answers faster than the
workspace can be looked at. When a turn has ended and a look after its end is done, what it changed (the state
before and after of each path) is written to the journal (desktop/checkpoints/journal.py).

Two caps keep a workspace set to a whole home folder from being copied (checkpoints.max_workspace_mb and
max_files, desktop/checkpoints/settings.py): the first look counts before it copies anything, and every look
counts as it goes; over either, recording pauses for every chat and says so (RecordingPaused, and /undo's
answer), until the settings or the workspace change. The first look, which copies the workspace, is never
waited for: a turn during it runs its tools at once (what they change before the copy reaches it is then not
undoable), so a large first copy delays nobody.

Retention (`tidy`, when the app starts, daily, and when a chat is deleted): each chat keeps its newest
checkpoints.keep_turns turns. A count, not an age: undo goes back turn by turn, and a chat the person returns
to after a month should still undo its last turns. A deleted chat's turns all go. Then every kept content that
no manifest (saved, or the last look's) and no kept turn names is removed. It runs with looks held off, after
the journal is rewritten (atomically) to say what is needed, so a crash at any point loses only what was no
longer needed.

`undo` looks again, then checks every path the turn changed: if it is no longer as the turn left it, the
person (or a later turn, or something else) changed it since, and nothing is undone until they choose (a
`Choice`): undo the rest and leave those files as they are now, or undo anyway, overwriting them, after a copy
of what each holds now is written under `checkpoints/overwritten/` in the data folder (undone.py), where it is
never tidied away. The memory files (USER.md, SOUL.md, memory/) are recorded like any file but never put back
without that choice: a turn's change to one is always such a file, changed since or not, because Dream and
the memory window write them too, at any moment. The files only the app writes (memory/history.jsonl, the
Dream cursor) are never looked at.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from desktop.checkpoints.blobs import LARGE, Blobs
from desktop.checkpoints.diffs import FileDiff, file_diff
from desktop.checkpoints.events import ChangesUndone, FilesChanged, RecordingPaused
from desktop.checkpoints.journal import Change, Journal, State, TurnChanges
from desktop.checkpoints.made import MadeFile, Preview, folder_of, made_files, read_preview
from desktop.checkpoints.manifests import Manifests
from desktop.checkpoints.notes import UndoNotes
from desktop.checkpoints.restore import CopyLost, NotPutBack, kind, revert
from desktop.checkpoints.scan import DIR, Entry, Limits, Manifest, OverLimit, look, measure, scan
from desktop.checkpoints.settings import CheckpointsConfig
from desktop.checkpoints.undone import Conflict, keep_copies, overwritten_folder
from desktop.checkpoints.wording import (
    Outcome,
    conflict_message,
    looked_message,
    lost_copy_message,
    path_list,
    paused_message,
    reason_of,
    unfinished_message,
    unfinished_note,
    unkept_message,
    unnoted_message,
    unrecorded_note,
    unwritten_message,
)
from desktop.kernel.host import Host
from desktop.session.session import now_iso
from desktop.workspace import access
from desktop.workspace.layout import APP_MANAGED_FILES, MEMORY_FILES
from desktop.workspace.opening import open_refusal

log = logging.getLogger(__name__)

KEEP_LIMIT = 64 * 1024 * 1024  # the largest file whose content is kept; a larger one is undone only if unchanged
SETTLE_WITHIN = 30.0  # seconds a tool waits for the look at its turn's start before it runs regardless
SAVE_WHEN_QUIET = 10.0  # seconds without a look before the last one is saved for the next run (and on close)
SKIPPED = frozenset(APP_MANAGED_FILES)  # only the app writes them (the history, the Dream cursor): never looked at
MEMORY = frozenset(MEMORY_FILES)  # and every path under memory/: never put back without the person's choice


@dataclass(eq=False)
class Actor:
    """A turn or background task while it runs: the paths changed while it was running, first and last state."""

    chat: str
    message: int
    label: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    at: str = field(default_factory=now_iso)
    changes: dict[str, tuple[Entry | None, Entry | None]] = field(default_factory=dict)
    ended: bool = False

    def note(self, path: str, old: Entry | None, new: Entry | None) -> None:
        first = self.changes[path][0] if path in self.changes else old
        self.changes[path] = (first, new)


@dataclass(frozen=True)
class Choice:
    """What an undo does with the turn's files that are not as it left them (and its memory files)."""

    leave: bool = False  # undo the rest, leaving those as they are now
    overwrite: frozenset[str] | None = frozenset()  # put these back too (None: every such file)


ASK = Choice()  # stop, and name them
REST = Choice(leave=True)
ANYWAY = Choice(overwrite=None)


@dataclass(frozen=True)
class UndoResult:
    message: str  # what happened, for the person
    turn: TurnChanges | None = None
    conflicts: tuple[Conflict, ...] = ()  # files to choose about: nothing was undone
    kept: Path | None = None  # where the overwritten files' contents were copied

    @property
    def undone(self) -> bool:
        return self.turn is not None and self.turn.undone


class Checkpoints:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.folder = host.home.data_dir / "checkpoints"
        self.blobs = Blobs(self.folder / "blobs", KEEP_LIMIT)
        self.journal = Journal.load(self.folder / "turns.jsonl")
        self.manifests = Manifests(self.folder / "manifests")
        self._root: Path | None = None  # the workspace `_manifest` describes
        self._manifest: Manifest = {}  # replaced by every look, never changed in place
        self._looked_ns = 0  # when the look that made `_manifest` began (wall clock, as file times are)
        self._unsaved = False
        self._looks = 0  # counted, so a pending save can tell whether the looks went quiet
        self._saver: asyncio.Future[None] | None = None
        self._active: set[Actor] = set()  # running, their start looked at
        self._touched: set[Actor] = set()  # running at some point since the last look
        self._starting: list[Actor] = []
        self._ending: list[Actor] = []
        self._wanted = False
        self._worker: asyncio.Future[None] | None = None
        self._settled = asyncio.Event()
        self._settled.set()  # nothing to wait for until a look is asked for
        self._lock = asyncio.Lock()  # one look or undo at a time
        self._first_copy = False  # the look running copies the workspace for the first time: nobody waits for it
        self.paused = ""  # why recording is paused, for the person; empty while it records
        self.notes = UndoNotes(host)  # what each undo leaves in its chat

    def resume(self) -> None:
        """The settings or the workspace changed: look again (which pauses again if it must)."""
        if self.paused:
            self.paused = ""
            self.host.publish(RecordingPaused(""))
        self.request_look()

    def begin(self, chat: str, message: int, label: str) -> Actor:
        """A turn or task starts: look at the workspace before any of its tools runs (`settled`)."""
        actor = Actor(chat, message, label)
        if not self.paused:
            self._starting.append(actor)
            self.request_look()
        return actor

    def end(self, actor: Actor) -> None:
        """It ended: the look after it tells what it changed."""
        actor.ended = True
        if actor in self._active or actor in self._starting:
            self._active.discard(actor)
            self._ending.append(actor)
            self.request_look()

    def request_look(self) -> None:
        self._wanted = True
        self._settled.clear()
        if self._worker is None:
            self._worker = self.host.spawn(self._work())

    async def settled(self) -> None:
        """Wait until every look asked for is done (a tool gate): what a tool changes is after them. The first
        copy of a workspace is not waited for."""
        if self._first_copy:
            return
        try:  # not wait_for: on Python 3.11 it swallows a Stop that lands as the look ends, and the tool runs
            async with asyncio.timeout(SETTLE_WITHIN):
                await self._settled.wait()
        except TimeoutError:
            log.warning("the workspace look took over %g s; a tool runs before it is done, so what it changes "
                        "may not all be undoable", SETTLE_WITHIN)

    def turns_of(self, chat: str) -> list[TurnChanges]:
        """The chat's turns that changed files in the workspace in force, oldest first."""
        return [t for t in self.journal.of(chat) if t.workspace == str(self.host.workspace)]

    async def diff(self, change: Change) -> FileDiff:
        """What a turn did to one file, from the kept copies (read in a thread: never on a window's way)."""
        return await asyncio.to_thread(file_diff, self.blobs, change)

    def made(self, chat: str) -> list[MadeFile]:
        """The files the chat's turns created or changed, still theirs, newest first."""
        return made_files(self.turns_of(chat))

    async def preview(self, path: str) -> Preview:
        """A workspace file as the side panel shows it (read through desktop.workspace.access, in a thread)."""
        return await asyncio.to_thread(read_preview, self.host.workspace, path)

    async def open_refusal(self, path: str) -> str:
        """Why the desktop must not open the file now (empty: it may)."""
        return await asyncio.to_thread(open_refusal, self.host.workspace, path)

    async def folder_of(self, path: str) -> Path | None:
        """The workspace folder holding `path`, for Show in folder (None when that is no folder inside it)."""
        return await asyncio.to_thread(folder_of, self.host.workspace, path)

    async def tidy(self) -> None:
        """Retention (see the module docstring): forget old turns and deleted chats', then the contents no
        longer named."""
        keep = self.host.config.section(CheckpointsConfig).keep_turns
        async with self._lock:
            chats = {t.chat for t in self.journal.turns}
            gone = await asyncio.to_thread(lambda: {c for c in chats if not self.host.sessions.path_for(c).exists()})
            counted: Counter[str] = Counter()
            kept: list[TurnChanges] = []
            for turn in reversed(self.journal.turns):
                if turn.chat not in gone and counted[turn.chat] < keep:
                    counted[turn.chat] += 1
                    kept.append(turn)
            await self.journal.keep_only(kept[::-1])
            removed = await asyncio.to_thread(self._collect)
        if removed:
            log.info("checkpoints: removed %d kept copies no longer needed", removed)

    def _collect(self) -> int:
        needed = {s[0] for turn in self.journal.turns for c in turn.changes for s in (c.before, c.after)
                  if s is not None}
        # The workspace in force by the last look, not its file: that may be older (a save comes after a look)
        # and name what has gone since; any file changed since then has other stat figures than the file says,
        # so a crash before the next save cannot leave a manifest entry whose content was removed.
        needed.update(e.digest for e in self._manifest.values())
        for manifest in self.manifests.others(self._root):
            needed.update(e.digest for e in manifest.values())
        return self.blobs.collect(needed)

    async def move_chat(self, old: str, new: str) -> None:
        for actor in [*self._active, *self._starting, *self._ending]:
            if actor.chat == old:
                actor.chat = new
        await self.journal.move(old, new)

    async def undo(self, chat: str, turn_id: str | None = None, choice: Choice = ASK) -> UndoResult:
        """Revert the chat's newest turn not yet undone that changed files (or the turn `turn_id`); files
        changed since it, and its memory files, as `choice` says. Whatever fails on the way (an OSError), the result
        says what, and what state the files are in: the Changes strip waits for it."""
        async with self._lock:
            if not self.paused:
                try:
                    await self._look()
                except OSError as exc:  # the workspace moved away, say: what changed since the turn is not known
                    log.warning("the look before an undo failed: %s", exc)
                    return UndoResult(looked_message(reason_of(exc)))
            if self.paused:
                return UndoResult(self.paused)
            left = [t for t in self.turns_of(chat) if not t.undone and (turn_id is None or t.id == turn_id)]
            if not left:
                return UndoResult("Nothing to undo: no turn of this chat changed files in the workspace"
                                  + (" that is not undone already." if self.journal.of(chat) else "."))
            turn = left[-1]
            todo, conflicts = self._plan(turn)
            chosen = [c for c in conflicts if choice.overwrite is None or c.path in choice.overwrite]
            if conflicts and not choice.leave and len(chosen) < len(conflicts):
                return UndoResult(conflict_message(turn, conflicts), turn, tuple(conflicts))
            # a folder made in a file's place stays, and so does a file whose folder became a link
            overwrite = [c for c in chosen if kind(c.now) != "dir" and not c.behind_link]
            kept_back = [c for c in conflicts if c not in overwrite]
            writes = todo + [Change(c.path, c.before, c.now) for c in overwrite]
            unkept = [c for c in writes if c.before is not None and kind(c.before) == "file"
                      and not self.blobs.has(c.before[0])]
            if unkept:
                large = [c.path for c in unkept if c.before is not None and c.before[0].startswith(LARGE)]
                gone = [c.path for c in unkept if c.path not in large]
                return UndoResult(unkept_message(turn, large, gone, KEEP_LIMIT), turn)
            root = self._root or self.host.workspace
            copies = [c.path for c in overwrite if kind(c.now) == "file"]
            kept = overwritten_folder(self.folder) if copies else None
            if kept is not None:
                try:
                    await asyncio.to_thread(keep_copies, root, copies, kept)
                except OSError as exc:
                    return UndoResult(f"Did not undo “{turn.label}”: what {path_list(copies)} hold now could not be "
                                      f"kept first ({exc.strerror or exc}). Nothing was changed.", turn)
            try:
                await asyncio.to_thread(revert, root, writes, self.blobs.read)
            except OSError as exc:
                return await self._unfinished(turn, root, writes, exc)
            await self._refreshed(root, writes)
            also = await self._mark_undone(turn)
        self._save_when_quiet()
        outcome = Outcome(turn, todo, overwrite, kept_back, kept)
        also += await self._leave_note(chat, outcome.note())
        self.host.publish(ChangesUndone(chat, turn.id))
        return UndoResult(outcome.message() + also, turn, kept=kept)

    async def _mark_undone(self, turn: TurnChanges) -> str:
        """Write down that the turn is undone; what to add to the message if that failed (the files are back
        already: the turn stays undone in this run, and only after a restart may it be offered again)."""
        try:
            await self.journal.mark_undone(turn)
        except OSError as exc:
            log.warning("could not write down that %s was undone: %s", turn.id, exc)
            return unwritten_message(self.journal.path, exc.strerror or str(exc))
        return ""

    async def _refreshed(self, root: Path, writes: list[Change]) -> None:
        """The paths written looked at again (see `_refresh`); failing that, the next look sees them."""
        try:
            await asyncio.to_thread(self._refresh, root, [c.path for c in writes])
        except OSError as exc:
            log.warning("looking at what the undo put back failed: %s", exc)

    async def _leave_note(self, chat: str, note: tuple[str, str]) -> str:
        """Leave a note in the chat (an undo's, or that a turn's changes were not written down); what to add to an
        undo's message if that failed (the files are as the message says all the same)."""
        try:
            await self.notes.leave(chat, *note)
        except OSError as exc:  # the chat's file cannot be written
            log.warning("could not leave a note in %s: %s", chat, exc)
            return unnoted_message(str(exc))
        return ""

    async def _unfinished(self, turn: TurnChanges, root: Path, writes: list[Change], exc: OSError) -> UndoResult:
        """A path could not be put back (the lock held): the turn stays not undone, so undoing it again once the
        cause is gone puts back the rest (what is back already needs nothing then, see `_plan`). The paths written
        are looked at again, so neither the message nor a later turn takes them for as the turn left them. When this
        undo put any back, the chat is told which, as after an undo that finished: the model last saw them as its
        turn left them."""
        log.warning("undoing %s stopped: %s", turn.id, exc)
        await self._refreshed(root, writes)
        self._save_when_quiet()
        back = [c.path for c in turn.changes if self._is_before(c)]
        if isinstance(exc, CopyLost):
            message = lost_copy_message(turn, exc.path, exc.error, back)
        else:
            failed = exc.path if isinstance(exc, NotPutBack) else None
            message = unfinished_message(turn, failed, exc.strerror or str(exc), back)
        if any(self._is_before(c) for c in writes):
            message += await self._leave_note(turn.chat, unfinished_note(
                turn, back, [c.path for c in turn.changes if c.path not in back]))
        return UndoResult(message, turn)

    def _is_before(self, change: Change) -> bool:
        """Whether the path is as it was before the change, as the last look saw it."""
        return _same(_state(self._manifest.get(change.path)), change.before)

    def _plan(self, turn: TurnChanges) -> tuple[list[Change], list[Conflict]]:
        """What to put back, and the files to ask about: changed since the turn (the person's edits, a later
        turn's), and its memory files. A path already as it was before the turn needs nothing."""
        todo, conflicts = [], []
        for change in turn.changes:
            now = _state(self._manifest.get(change.path))
            memory = _is_memory(change.path) and "dir" not in (kind(change.before), kind(change.after))
            others = self._holds_others(change, turn)
            if _same(now, change.after) and not memory and not others:
                todo.append(change)
            elif others or (not _same(now, change.before) and not kind(now) == kind(change.after) == "dir"):
                conflicts.append(Conflict(change.path, change.before, now, memory))
        # A file to write back whose folder is a link (or a file) now, one this undo does not put back first: through
        # a link the path names another file (see `_behind_link`). It is left, and asked about as changed since.
        reverted = {c.path for c in todo}
        writes: list[Change | Conflict] = [*todo, *conflicts]
        behind = {c.path for c in writes if c.before is not None and _behind_link(c.path, self._manifest, reverted)}
        conflicts = [replace(c, behind_link=True) if c.path in behind else c for c in conflicts]
        conflicts += [Conflict(c.path, c.before, None, False, behind_link=True) for c in todo if c.path in behind]
        return [c for c in todo if c.path not in behind], conflicts

    def _holds_others(self, change: Change, turn: TurnChanges) -> bool:
        """Whether a folder the turn made in a file's (or link's) place now holds something the turn did not put
        there (the person's): putting the file back would need the folder gone, so it is asked about as changed
        since, never emptied."""
        if kind(change.after) != "dir" or kind(change.before) in (None, "dir"):
            return False
        inside, made = change.path + "/", {c.path for c in turn.changes}
        return any(path.startswith(inside) and path not in made for path in self._manifest)

    async def _work(self) -> None:
        try:
            while self._wanted:
                self._wanted = False
                async with self._lock:
                    try:
                        await self._look()
                    except Exception:  # a failed look must not leave tools waiting: the next one tries again
                        log.exception("looking at the workspace for checkpoints failed")
        finally:
            self._worker = None
            if not self._wanted:
                self._settled.set()
        self._save_when_quiet()

    async def close(self) -> None:
        """The app closes: save the last look now rather than when the looks go quiet."""
        if self._saver is not None:
            self._saver.cancel()
        await self._save()

    def _save_when_quiet(self) -> None:
        """Save the last look once no look has come for SAVE_WHEN_QUIET seconds, not after every look: the
        manifest names every file of the workspace (a megabyte of JSON for 10,000 files), so writing it per look
        would cost a turn more than the look itself, and holding the interpreter lock while it is encoded would
        stall the windows. Only the next run needs it, and losing it to a crash costs only time: that run then
        reads again what changed since the last save (see `_collect` for why no kept content it names is gone)."""
        if self._unsaved and self._saver is None:
            self._saver = self.host.spawn(self._save_after_quiet())

    async def _save_after_quiet(self) -> None:
        try:
            while self._unsaved:  # again if a look came while it was being written
                looks = -1
                while looks != self._looks:
                    looks = self._looks
                    await asyncio.sleep(SAVE_WHEN_QUIET)
                await self._save()
        finally:
            self._saver = None

    async def _save(self) -> None:
        """Keep the last look for the next run (the first look then reads only what changed meanwhile)."""
        if self._unsaved and self._root is not None:
            self._unsaved = False
            try:
                await asyncio.to_thread(self.manifests.save, self._root, self._manifest, self._looked_ns)
            except OSError as exc:
                log.warning("could not save the checkpoints' manifest: %s", exc)

    async def _look(self) -> None:
        """One look (the lock held): what changed since the last goes to the turns running meanwhile; turns
        that started are running from now, those that ended are written down."""
        if self.paused:
            return
        starting, self._starting = self._starting, []
        ending, self._ending = self._ending, []
        touched = self._touched
        root = self.host.workspace
        if root != self._root:
            await self._save()  # the workspace left behind: its last look, for when it is back
            self._manifest, self._looked_ns = await asyncio.to_thread(self.manifests.load, root)
            self._root = root
        old = self._manifest
        self._looks += 1
        settings = self.host.config.section(CheckpointsConfig)
        limits = Limits(settings.max_workspace_mb * 2**20, settings.max_files)
        try:
            if not settings.enabled:
                raise Off
            if not old:
                self._first_copy = True
                self._settled.set()  # tools waiting already go on
                await asyncio.to_thread(self._measure, root, limits)
            started = time.time_ns()
            self._manifest, changed = await asyncio.to_thread(self._scan, root, old, limits, self._looked_ns)
            self._looked_ns = started
        except (Off, OverLimit) as stop:
            self._pause(stop)
            return
        finally:
            self._first_copy = False
        for path in changed:
            before, after = old.get(path), self._manifest.get(path)
            if not _same(_state(before), _state(after)):
                for actor in touched:
                    actor.note(path, before, after)
        self._unsaved = self._unsaved or bool(changed)
        self._active |= {a for a in starting if not a.ended}
        self._touched = set(self._active)
        for actor in ending:
            await self._write_down(actor, root)

    def _pause(self, stop: Exception) -> None:
        """Stop recording: every turn running now and its changes are let go (none can be undone in full). Over
        a cap the chats say so; turned off, only /undo does (the person chose it)."""
        self.paused = paused_message(stop)
        self._starting, self._ending, self._active, self._touched = [], [], set(), set()
        if isinstance(stop, OverLimit):
            log.warning("%s", self.paused)
            self.host.publish(RecordingPaused(self.paused))

    async def _write_down(self, actor: Actor, root: Path) -> None:
        changes = [Change(path, _state(first), _state(last)) for path, (first, last) in sorted(actor.changes.items())
                   if not _same(_state(first), _state(last))]
        if not changes:
            return
        turn = TurnChanges(actor.id, actor.chat, str(root), actor.message, actor.label, actor.at, changes)
        try:
            await self.journal.add(turn)
        except OSError as exc:  # this turn's alone: the others ending in the same look are still written down
            log.warning("could not write down the changes of %s: %s", turn.id, exc)
            # Told outside the look's lock: saving the note waits for the chat's file.
            self.host.spawn(self._leave_note(turn.chat, unrecorded_note(turn, self.journal.path,
                                                                        exc.strerror or str(exc))))
        self.host.publish(FilesChanged(actor.chat, turn))

    def _scan(self, root: Path, previous: Manifest, limits: Limits, looked_ns: int) -> tuple[Manifest, list[str]]:
        with access.opened_dir(root) as fd:
            return scan(fd, previous, self.blobs, SKIPPED, limits, looked_ns)

    def _measure(self, root: Path, limits: Limits) -> None:
        with access.opened_dir(root) as fd:
            measure(fd, SKIPPED, limits)

    def _refresh(self, root: Path, paths: Iterable[str]) -> None:
        """After an undo: the paths it wrote as they are now, so no turn is credited with them."""
        manifest = dict(self._manifest)  # a new one: a save in progress holds the old
        with access.opened_dir(root) as fd:
            for path in paths:
                entry = look(fd, path, manifest.get(path), self.blobs)
                if entry is None:
                    manifest.pop(path, None)
                else:
                    manifest[path] = entry
        self._manifest = manifest
        self._unsaved = True


_FOLDER = Entry(DIR, 0, 0, 0, 0, 0)  # a name the manifest lacks: nothing to follow there


class Off(Exception):
    """checkpoints.enabled is off."""


def _state(entry: Entry | None) -> State:
    return None if entry is None else (entry.digest, entry.mode)


def _same(a: State, b: State) -> bool:
    """Same content (or both absent); a mode change alone is not a change of the file."""
    return (a is None) == (b is None) and (a is None or b is None or a[0] == b[0])


def _behind_link(path: str, manifest: Manifest, reverted: set[str]) -> bool:
    """Whether a folder on the way to `path` is a link now, and not among the `reverted` paths (a link there is
    removed before any file is written). Looks never follow a link, so the path as recorded is not there; writing
    it would follow the link to another folder of the workspace and overwrite a file no turn recorded there (the
    person's, or memory/history.jsonl, which the sandbox may not write). A file there now (the person saved one
    under the name of a folder the turn removed) is as much in the way: nothing can be written under it."""
    parts = path.split("/")[:-1]
    folders = ("/".join(parts[:n]) for n in range(1, len(parts) + 1))
    return any(f not in reverted and manifest.get(f, _FOLDER).digest != DIR for f in folders)


def _is_memory(path: str) -> bool:
    return path in MEMORY or path.startswith("memory/")

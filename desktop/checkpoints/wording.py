"""What the checkpoints say: why recording paused, why an undo stopped, and what an undo did, to the person (the
message) and in the chat (the note, which the model reads too). Kept apart from desktop/checkpoints/service.py
so the sentences can be read and changed in one place, without the looks and the undo around them."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from desktop.checkpoints.blobs import Damaged
from desktop.checkpoints.journal import Change, TurnChanges
from desktop.checkpoints.restore import kind
from desktop.checkpoints.scan import MAX_DEPTH, OverLimit
from desktop.checkpoints.undone import Conflict
from desktop.kernel.wellformed import well_formed

NOTE_NAMES = 20  # the files an undo's note names for the model; more are counted


def paused_message(stop: Exception) -> str:
    if not isinstance(stop, OverLimit):
        return ("Undo is off: recording file changes is turned off (checkpoints.enabled, Settings → "
                "Checkpoints).")
    if stop.deep:
        shown = well_formed(stop.deep)
        return (f"Undo is off: the workspace has folders nested more than {MAX_DEPTH} deep, such as "
                f"`{shown[:60]}{'…' if len(shown) > 60 else ''}`. Its changes are not recorded; remove or move that "
                "folder, then restart the app, to record them again.")
    if stop.too_many_files:
        held = f"more than {stop.limits.max_files:,} files and folders, over checkpoints.max_files"
    else:
        held = f"{_megabytes(stop.size)} MB, over checkpoints.max_workspace_mb ({stop.limits.max_bytes // 2**20} MB)"
    return (f"Undo is off: the workspace holds {held}. Its changes are not recorded and nothing more of it is "
            "copied; choose a smaller workspace or raise the limit in Settings → Checkpoints.")


def _megabytes(size: int) -> str:
    return f"{size / 2**20:,.0f}" if size >= 2**20 else f"{size / 2**20:.1f}"


def _named(path: str) -> str:
    """A workspace path as the chat says it. A name that is not UTF-8 (a sandboxed command can make one) shows U+FFFD
    where its bytes were: the chat's file cannot hold it as it is (the journal keeps it exactly). Fenced by more
    backticks than any run in it: a name's own backtick would end the code and make the rest Markdown, where a
    picture it spells is a file read as the strip shows the message."""
    shown = well_formed(path)
    fence = "`" * (max(map(len, re.findall("`+", shown)), default=0) + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def path_list(paths: list[str], most: int = 8) -> str:
    """Workspace paths as the chat says them: up to `most` named, the rest counted."""
    return _listed([_named(p) for p in paths], most)


def _listed(items: list[str], most: int) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def conflict_message(turn: TurnChanges, conflicts: list[Conflict]) -> str:
    return (f"Did not undo “{turn.label}”: {_said_of(conflicts)}, so undoing it would overwrite "
            f"{'it' if len(conflicts) == 1 else 'them'}. Nothing was changed. `/undo rest` puts back the other "
            "files and leaves these as they are now; `/undo anyway` puts these back too, after keeping a copy of "
            "what they hold now (the chat window's changes strip offers the same).")


def unfinished_message(turn: TurnChanges, failed: str | None, reason: str, back: list[str]) -> str:
    """An undo that stopped part way: which file could not be put back and why, what is back already."""
    what = f"{_named(failed)} could not be put back" if failed else "its files could not be put back"
    return (f"Did not finish undoing “{turn.label}”: {what} ({reason}).{_back(back)} Fix that (a folder made "
            "read-only, say, or a full disk), then undo again to put back the rest.")


def lost_copy_message(turn: TurnChanges, failed: str, error: OSError, back: list[str]) -> str:
    """An undo that stopped at a file whose kept copy is damaged or gone: nothing the person fixes brings it back,
    and undoing again stops there again, so the way on is to leave that file out (`/undo rest` leaves a file
    changed since the turn as it is)."""
    state = ("is damaged" if isinstance(error, Damaged) else "is gone" if isinstance(error, FileNotFoundError)
             else f"could not be read ({reason_of(error)})")
    return (f"Did not finish undoing “{turn.label}”: the copy of {_named(failed)} kept from before the turn {state}, "
            f"so it cannot be put back.{_back(back)} `/undo` would stop at it again. {_leave_out(1)}")


def _leave_out(count: int) -> str:
    that, it = ("that file", "it") if count == 1 else ("those files", "them")
    return (f"To put back the rest, change or delete {that} first (put your own copy back, if you have one): "
            f"`/undo rest` then leaves {it} as {'it is' if count == 1 else 'they are'}.")


def unkept_message(turn: TurnChanges, large: list[str], gone: list[str], limit: int) -> str:
    """An undo that did not start: files whose earlier content was never kept (too large), or whose kept copy is
    gone from the data folder (deleted by hand, a disk tidy-up); `limit` is the largest file kept."""
    why = []
    if large:
        why.append(f"the earlier content of {path_list(large)} was not kept (files over {limit // 2**20} MB "
                   "are not)")
    if gone:
        why.append(f"the copy of {path_list(gone)} kept from before the turn is gone from the app's data folder")
    count = len(large) + len(gone)
    return (f"Did not undo “{turn.label}”: {' and '.join(why)}, so {'it' if count == 1 else 'they'} cannot be put "
            f"back. Nothing was changed. {_leave_out(count)}")


def unfinished_note(turn: TurnChanges, back: list[str], not_back: list[str]) -> tuple[str, str]:
    """An undo that stopped part way, for the chat: the files it reads as the turn left them are not all so."""
    files = f"{len(back)} file{'s' if len(back) != 1 else ''}"
    return (f"Partly undid the changes of “{turn.label}”: {files} put back, {len(not_back)} not",
            f"The person undid that turn's changes to the workspace, but the undo stopped part way. Put back as before "
            f"the turn: {path_list(back, NOTE_NAMES)}. Not put back: {path_list(not_back, NOTE_NAMES)}.")


def _back(back: list[str]) -> str:
    return (f" {path_list(back)} {'is' if len(back) == 1 else 'are'} as before the turn again; the rest is still as "
            "the turn left it." if back else " Its files are still as the turn left them.")


def reason_of(exc: OSError) -> str:
    """"No such file or directory: `/home/me/workspace`": the file named, so the person can tell which failed, and
    fenced as every name here (a folder of the workspace is a command's to name)."""
    if exc.strerror and exc.filename:
        return f"{exc.strerror}: {_named(os.fsdecode(exc.filename))}"
    return exc.strerror or str(exc)


def looked_message(reason: str) -> str:
    """The look before an undo failed: without it, which files changed since the turn is not known."""
    return (f"Did not undo: looking at the workspace failed ({reason}), so which files changed since the turn is not "
            "known. Nothing was changed. Check that the workspace folder is there and readable, then undo again.")


def unwritten_message(journal: Path, reason: str) -> str:
    """Added to an undo's message when its files are back but the record of it could not be written."""
    return (f"\n\nThat it was undone could not be written down in {_named(str(journal))} ({reason}): after the app "
            "restarts, it may be offered for undo again.")


def unrecorded_note(turn: TurnChanges, journal: Path, reason: str) -> tuple[str, str]:
    """A turn's changes could not be written down: the chat's line, and for the model that nothing else failed."""
    return (f"The file changes of “{turn.label}” could not be written down in {_named(str(journal))} ({reason}): "
            "they can be undone until the app closes, not after it restarts. Check that the file is writable.",
            "Only the app's record of that turn failed; the workspace is as the turn left it.")


def unnoted_message(reason: str) -> str:
    """Added to an undo's message when the note it leaves in the chat could not be saved."""
    return f"\n\nThe note saying so could not be saved in the chat, so the model does not know of it: {reason}."


def _said_of(conflicts: list[Conflict] | tuple[Conflict, ...]) -> str:
    """"`plan.md` changed since that turn and `USER.md` is a memory file"."""
    changed = [c.path for c in conflicts if not c.memory]
    memory = [c.path for c in conflicts if c.memory]
    parts = [f"{path_list(changed)} changed since that turn"] if changed else []
    if memory:
        parts.append(f"{path_list(memory)} {'is a memory file' if len(memory) == 1 else 'are memory files'}")
    return " and ".join(parts)


_SAID = {"modified": "restored", "created": "removed", "deleted": "brought back"}


def _files(done: list[Change]) -> list[Change]:
    return [c for c in done if "dir" not in (kind(c.before), kind(c.after))]


@dataclass(frozen=True)
class Outcome:
    """What an undo did, said to the person (`message`) and left in the chat (`note`)."""

    turn: TurnChanges
    done: list[Change]  # put back as they were before the turn
    overwritten: list[Conflict]  # changed since, put back all the same
    left: list[Conflict]  # changed since, left as they are
    kept: Path | None  # where what the overwritten files held was copied

    def message(self) -> str:
        files = _files(self.done)
        if not files and not self.overwritten and not self.left:
            return f"Undid “{self.turn.label}”: its files were already as before it."
        lines = [f"- {_SAID[c.verb]} {_named(c.path)}" for c in files]
        lines += [f"- put back {_named(c.path)} over what it held since (copied first)" for c in self.overwritten]
        lines += [f"- left {_named(c.path)} as it is now" for c in self.left]
        where = f"\n\nWhat the overwritten files held is kept in `{self.kept}`." if self.kept else ""
        return f"Undid the file changes of “{self.turn.label}”:\n\n" + "\n".join(lines) + where

    def note(self) -> tuple[str, str]:
        """The chat's line, counted ("3 files restored, 1 removed"), and for the model which files."""
        files = _files(self.done)
        counts = Counter(c.verb for c in files)
        parts = [(counts[verb], _SAID[verb]) for verb in _SAID if counts[verb]]
        parts += [(len(self.overwritten), "overwritten (a copy kept)")] if self.overwritten else []
        parts += [(len(self.left), "left as changed since")] if self.left else []
        said = [f"{n} {what}" for n, what in parts]
        if said:  # the first count says what is counted
            said[0] = f"{parts[0][0]} file{'s' if parts[0][0] != 1 else ''} {parts[0][1]}"
        what = ", ".join(said) or "its files were already as before it"
        named = [f"{_SAID[c.verb]} {_named(c.path)}" for c in files] + \
            [f"put back {_named(c.path)}" for c in self.overwritten]
        names = _listed(named, NOTE_NAMES)
        left = f" Left as they are: {path_list([c.path for c in self.left])}." if self.left else ""
        details = f"The person undid that turn's changes to the workspace{': ' + names if named else ''}.{left}"
        return f"Undid the changes of “{self.turn.label}”: {what}", details

"""Putting a turn's files back as they were before it: through desktop.workspace.access, so a link at a target is
replaced, never written through, and no link on the way is followed at all, not even one that stays inside. The
paths were recorded without following links (desktop/checkpoints/scan.py); a folder on the way that is a link now
leads to another path, perhaps a file of the person's or the app's own memory/history.jsonl. The undo leaves such
files alone (service.py `_plan`); a link made in the instant since its look makes the undo stop instead."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from desktop.checkpoints.journal import Change, State
from desktop.checkpoints.scan import DIR, LINK
from desktop.workspace import access


def kind(state: State) -> str | None:
    """"dir", "link" or "file" for a recorded state, None for absent."""
    if state is None:
        return None
    return "dir" if state[0] == DIR else "link" if state[0].startswith(LINK) else "file"


class NotPutBack(OSError):
    """Putting `path` back failed (a folder the person made read-only, a full disk): the undo stops there, and the
    person is told which file and why."""

    def __init__(self, path: str, error: OSError) -> None:
        super().__init__(error.errno, error.strerror or str(error))
        self.path = path
        self.error = error


class CopyLost(NotPutBack):
    """The copy of `path` kept from before the turn is damaged or gone: unlike a folder made read-only, nothing the
    person fixes in the workspace lets it be put back, and undoing again stops at it again."""


def revert(root: Path, changes: list[Change], content: Callable[[str], bytes]) -> None:
    """Make every path of `changes` as its `before` says: what the turn made is removed (folders only when
    empty: something the person put there stays), what it deleted or changed is written back (`content` gives
    a file's kept bytes by digest). Order matters where a file became a folder or back. Stops at the first path
    that cannot be put back (NotPutBack; CopyLost when its kept bytes cannot be had); a file is written whole or not
    at all, so none is left half written."""
    made = [c for c in changes if kind(c.after) not in (None, "dir") and kind(c.before) != kind(c.after)]
    for change in made:
        with _putting_back(change.path):
            access.remove(root, change.path, links=False)
    for change in sorted((c for c in changes if kind(c.after) == "dir" and kind(c.before) != "dir"),
                         key=lambda c: -len(PurePosixPath(c.path).parts)):
        access.remove_empty_dir(root, change.path, links=False)
    for change in sorted((c for c in changes if kind(c.before) == "dir" and kind(c.after) != "dir"),
                         key=lambda c: len(PurePosixPath(c.path).parts)):
        with _putting_back(change.path), access.opened_dir(root, change.path, create=True, links=False) as fd:
            os.fchmod(fd, change.before[1] if change.before else 0o755)
    for change in changes:
        before = change.before
        if before is None or kind(before) == "dir":
            continue
        if kind(before) == "link":
            with _putting_back(change.path):
                _put_link(root, change.path, before[0][len(LINK):])
            continue
        try:
            data = content(before[0])
        except OSError as exc:
            raise CopyLost(change.path, exc) from exc
        with _putting_back(change.path):
            access.write_bytes(root, change.path, data, mode=before[1], links=False)


@contextmanager
def _putting_back(path: str) -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise NotPutBack(path, exc) from exc


def _put_link(root: Path, relpath: str, target: str) -> None:
    """A link as it was: its text only, never resolved (whoever reads through it later judges it then)."""
    path = PurePosixPath(relpath)
    access.remove(root, relpath, links=False)
    parent = str(path.parent) if path.parent != PurePosixPath(".") else ""
    with access.opened_dir(root, parent, create=True, links=False) as fd:
        os.symlink(target, path.name, dir_fd=fd)

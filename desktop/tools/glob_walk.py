"""The glob tool's search (and grep's, for `**/*`): every path under a folder once, matched against the pattern
as it goes.

Why not `Path.glob`: it follows every link to a folder for each `*` of the pattern, and walks the tree again
for each `**` after another, so the work multiplies with the pattern's length. Twelve `**/*/` over a chain of
folders sixty deep (which a sandboxed command makes in a moment) took ten times longer with each one, hours by
the sixth, years by the twelfth; stars over three links to their own folder, three times longer with each. All
of it in a thread of the app that no Stop can end, slowing the windows beside it. Here the walk reads each
folder once, a batch of names at a time, and follows no link (what a link inside leads to is found by its own
path), the pattern is kept as the set of its positions a path has reached (so `**` costs nothing extra), a folder
is entered only while some position can still match below it, and a walk that still takes too long (a workspace
of millions of files, or one folder of millions of names) stops at a deadline.

One difference from `Path.glob`: a pattern ending in `**` matches files too, not only folders.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterator
from pathlib import Path

from desktop.workspace import access

ANY_DEPTH = "**"
EVERY_PATH = (ANY_DEPTH, "*")  # the parts of `**/*`: every file and folder at any depth
BATCH = 1000  # names of one folder read, sorted and gone through at a time: a folder of millions is never held whole
MAX_DEPTH = 200  # folders within folders: each one on the way down holds a descriptor open
_TOP = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


class TooLong(Exception):
    """The walk ran past its deadline."""


class TooDeep(Exception):
    """The walk met folders nested more than MAX_DEPTH deep."""


def pattern_parts(pattern: str) -> tuple[str, ...]:
    """The pattern's names, split at "/" ("." and empty ones dropped; `**/**` is the same as `**`)."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if part in ("", ".") or (part == ANY_DEPTH and parts[-1:] == [ANY_DEPTH]):
            continue
        parts.append(part)
    return tuple(parts)


def matches(base: Path, parts: tuple[str, ...], seconds: float) -> Iterator[tuple[str, bool]]:
    """Every path under `base` (files, folders and links, none followed; .git and what it holds left out) that
    `parts` match in full, relative to `base` and as text (a Path keeps each of its names in an interned table,
    which grew with a crowd of them), with whether it is a folder (not a link to one). TooLong after `seconds`
    (the time the caller takes over each path counts too), TooDeep past MAX_DEPTH folders down.

    A folder's names are read BATCH at a time from an open descriptor (os.walk listed each folder whole before
    anything else: one folder of a million names a command made was held whole, before the deadline was even
    looked at), each batch in the order of its names, then the folders among them are gone into in that order:
    a folder of at most BATCH names is walked exactly as os.walk did, a larger one in sorted runs of BATCH."""
    deadline = time.monotonic() + seconds
    stack = [_Folder(os.open(base, _TOP), "", _closure(parts, {0}))]
    try:
        while stack:
            here = stack[-1]
            if here.inner:
                name, states = here.inner.pop()
                if len(stack) > MAX_DEPTH:
                    raise TooDeep
                try:
                    fd = access.open_child_dir(here.fd, name)
                except OSError:  # gone, or swapped for a link meanwhile: not followed (os.walk skipped it too)
                    continue
                stack.append(_Folder(fd, f"{here.path}{name}/", states))
                continue
            batch = here.read(BATCH)
            if not batch:
                stack.pop().close()
                continue
            entered = []
            for name, is_dir in batch:
                if time.monotonic() > deadline:  # per name: one folder can hold millions, each matched and checked
                    raise TooLong
                if name == ".git":
                    continue
                after = _step(parts, here.states, name)
                if len(parts) in after:
                    yield here.path + name, is_dir
                if is_dir and any(s < len(parts) for s in after):
                    entered.append((name, after))
            here.inner = entered[::-1]  # popped from the end: in the order of their names
    finally:
        for folder in stack:
            folder.close()


class _Folder:
    """One folder on the way down: its descriptor and path (relative to the walk's base, ending in "/"), the names
    still to be read from it, and the folders of the batch read last still to be gone into (with the pattern's
    positions each has reached)."""

    def __init__(self, fd: int, path: str, states: frozenset[int]) -> None:
        self.fd, self.path, self.states = fd, path, states
        self.inner: list[tuple[str, frozenset[int]]] = []
        self.names: os._ScandirIterator[str] | None = None
        try:
            self.names = os.scandir(fd)
        except OSError:  # unreadable: walked as empty, as os.walk did
            pass

    def read(self, most: int) -> list[tuple[str, bool]]:
        """Up to `most` more of its names, sorted, each with whether it is a folder (a link is not)."""
        batch: list[tuple[str, bool]] = []
        if self.names is None:
            return batch
        try:
            for entry in self.names:
                batch.append((entry.name, entry.is_dir(follow_symlinks=False)))
                if len(batch) == most:
                    return sorted(batch)
        except OSError:
            pass
        self._done()
        return sorted(batch)

    def close(self) -> None:
        self._done()
        os.close(self.fd)

    def _done(self) -> None:
        if self.names is not None:
            self.names.close()
            self.names = None


def _step(parts: tuple[str, ...], states: frozenset[int], name: str) -> frozenset[int]:
    """The positions reached once `name` is matched from `states`."""
    after = set()
    for state in states:
        if state == len(parts):
            continue
        if parts[state] == ANY_DEPTH:
            after.add(state)  # ** takes this name and may take more
        elif fnmatch.fnmatchcase(name, parts[state]):
            after.add(state + 1)
    return _closure(parts, after)


def _closure(parts: tuple[str, ...], states: set[int]) -> frozenset[int]:
    """`states` with every ** also passed over (it may match no name at all)."""
    found = set(states)
    for state in sorted(states):
        while state < len(parts) and parts[state] == ANY_DEPTH:
            state += 1
            found.add(state)
    return frozenset(found)

"""The glob tool's search: every path under a folder once, matched against the pattern as it goes.

Why not `Path.glob`: it follows every link to a folder for each `*` of the pattern, and walks the tree again
for each `**` after another, so the work multiplies with the pattern's length. Twelve `**/*/` over a chain of
folders sixty deep (which a sandboxed command makes in a moment) took ten times longer with each one, hours by
the sixth, years by the twelfth; stars over three links to their own folder, three times longer with each. All
of it in a thread of the app that no Stop can end, slowing the windows beside it. Here the walk lists each
folder once and follows no link (what a link inside leads to is found by its own path), the pattern is kept as
the set of its positions a path has reached (so `**` costs nothing extra), a folder is entered only while some
position can still match below it, and a walk that still takes too long (a workspace of millions of files, or
one folder of millions of names) stops at a deadline.

One difference from `Path.glob`: a pattern ending in `**` matches files too, not only folders.
"""

from __future__ import annotations

import fnmatch
import os
import time
from collections.abc import Iterator
from pathlib import Path

ANY_DEPTH = "**"


class TooLong(Exception):
    """The walk ran past its deadline."""


def pattern_parts(pattern: str) -> tuple[str, ...]:
    """The pattern's names, split at "/" ("." and empty ones dropped; `**/**` is the same as `**`)."""
    parts: list[str] = []
    for part in pattern.split("/"):
        if part in ("", ".") or (part == ANY_DEPTH and parts[-1:] == [ANY_DEPTH]):
            continue
        parts.append(part)
    return tuple(parts)


def matches(base: Path, parts: tuple[str, ...], seconds: float) -> Iterator[Path]:
    """Every path under `base` (files, folders and links, none followed; .git and what it holds left out) that
    `parts` match in full. TooLong after `seconds`."""
    deadline = time.monotonic() + seconds
    reached = {str(base): _closure(parts, {0})}
    for folder, dirs, names in os.walk(base):
        if time.monotonic() > deadline:
            raise TooLong
        states = reached.pop(folder)
        folders, entered = set(dirs), []
        for name in sorted([*dirs, *names]):
            if time.monotonic() > deadline:  # here too: one folder can hold millions, each matched and checked
                raise TooLong
            if name == ".git":
                continue
            after = _step(parts, states, name)
            if len(parts) in after:
                yield Path(folder) / name
            if name in folders and any(s < len(parts) for s in after):
                reached[os.path.join(folder, name)] = after
                entered.append(name)
        dirs[:] = entered  # os.walk enters only these (never a link: it is not asked to follow them)


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

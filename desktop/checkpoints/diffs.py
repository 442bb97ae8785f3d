"""What a turn did to one file, as a person reads it on the chat's changes strip: the unified diff of its text
before and after the turn, from the kept copies in the checkpoint store (never from the workspace, which may
have changed since), or a line saying why there is none ("binary file, 12 KB → 14 KB").

Why the caps: the diff is shown in a text box on the GUI thread, tinted line by line, so a side over
DIFF_BYTES is not diffed at all and a diff over DIFF_LINES is cut, with the count of what was left out. Both
still say what happened to the file. Blocking (it reads the store): run it in a thread."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from desktop.checkpoints.blobs import LARGE, Blobs, Damaged
from desktop.checkpoints.journal import Change, State
from desktop.checkpoints.restore import kind
from desktop.checkpoints.scan import LINK

DIFF_BYTES = 1024 * 1024  # a larger side is described, not diffed
DIFF_LINES = 2000  # lines of diff shown at most
_SNIFF = 8192  # bytes looked at for a NUL, which marks a file as not text


@dataclass(frozen=True)
class FileDiff:
    text: str  # the unified diff; empty when `summary` says why there is none
    summary: str = ""


def file_diff(blobs: Blobs, change: Change) -> FileDiff:
    """The change to one file of a turn (`change.path` is a file on at least one side)."""
    if "link" in (kind(change.before), kind(change.after)):
        return FileDiff("", " → ".join(_side(s) for s in (change.before, change.after)))
    files = [s if s is not None and kind(s) == "file" else None for s in (change.before, change.after)]
    sizes = " → ".join(_size(blobs, s) for s in files if s is not None)  # one side for a file made or deleted
    if any(s is not None and s[0].startswith(LARGE) for s in files):
        return FileDiff("", f"large file (not kept), {sizes}")
    if any(_length(blobs, s) > DIFF_BYTES for s in files if s is not None):
        return FileDiff("", f"large file, {sizes}")
    try:
        before, after = (blobs.read(s[0]) if s is not None else b"" for s in files)
    except FileNotFoundError:
        return FileDiff("", "its content was not kept, so the change cannot be shown")
    except Damaged:
        return FileDiff("", "the kept copy is damaged, so the change cannot be shown")
    old, new = _text(before), _text(after)
    if old is None or new is None:
        return FileDiff("", f"binary file, {sizes}")
    if not old and not new:
        return FileDiff("", "empty file")
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(),
                                      "/dev/null" if files[0] is None else f"a/{change.path}",
                                      "/dev/null" if files[1] is None else f"b/{change.path}", lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = lines[:DIFF_LINES] + [f"… {len(lines) - DIFF_LINES:,} more lines of the diff not shown"]
    return FileDiff("\n".join(lines), "" if lines else "only its line endings changed")


def _text(data: bytes) -> str | None:
    if b"\0" in data[:_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _length(blobs: Blobs, state: tuple[str, int]) -> int:
    """A kept file's size from the store (a file too large to keep has it in its digest); 0 when not kept."""
    digest = state[0]
    if digest.startswith(LARGE):
        return int(digest.split(":")[1])
    return blobs.size(digest) or 0


def _side(state: State) -> str:
    if state is None:
        return "nothing"
    if kind(state) == "link":
        return f"a link to {state[0][len(LINK):]}"
    return "a folder" if kind(state) == "dir" else "a file"


def _size(blobs: Blobs, state: tuple[str, int]) -> str:
    return human_size(_length(blobs, state))


def human_size(n: int) -> str:
    """"3 bytes", "12 KB", "1.1 MB"."""
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KB"
    return f"{n / 1024 / 1024:.1f} MB"

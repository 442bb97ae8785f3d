"""What the agent made in a chat: the files its turns (and background tasks) created or changed, newest first,
from the checkpoints journal, and what the chat window's side panel needs to show one: a preview read through
desktop.workspace.access and whether the desktop may open it.

The workspace is adversarial: a file listed here may since have become a link out of it, a named pipe or a
gigabyte, or be a script the agent wrote. So a preview reads at most PREVIEW_BYTES of a regular file (a larger
picture is not shown, a larger text is cut and says so), never through a link that leaves the workspace, and
Open is refused for anything the desktop could run rather than show (desktop/workspace/opening.py, which clicked
links use too). Show in folder stays offered. Blocking functions: run them in a thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from desktop.checkpoints.diffs import human_size
from desktop.checkpoints.journal import TurnChanges
from desktop.checkpoints.restore import kind
from desktop.workspace import access
from desktop.workspace.opening import SNIFF, could_run, read_head

PREVIEW_BYTES = 256 * 1024  # of a text file shown; more is cut
IMAGE_BYTES = 20 * 1024 * 1024  # a larger picture is described, not shown
MARKDOWN = frozenset({".md", ".markdown", ".mdown"})
IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico"})  # not SVG: it can name other files
HTML = frozenset({".html", ".htm", ".xhtml"})
Kind = Literal["markdown", "image", "text", "html", "binary", "none"]


@dataclass(frozen=True)
class MadeFile:
    path: str
    verb: str  # "created" or "modified", by its newest turn
    label: str  # what was asked in it


@dataclass(frozen=True)
class Preview:
    path: str
    kind: Kind  # "none": nothing to show, `note` says why
    text: str = ""  # markdown, text and html
    data: bytes = b""  # an image's bytes
    note: str = ""  # for the person: cut, too large, binary, gone, refused
    runs: str = ""  # why Open is refused ("it is a script (.sh), …"); empty: it may be opened
    readable: bool = True  # False: gone or refused, so nothing can be done with it but Show in folder


def made_files(turns: list[TurnChanges]) -> list[MadeFile]:
    """The files `turns` (a chat's, oldest first) created or changed and that are still theirs, newest first: a
    turn undone counts for nothing, and a file a later turn deleted is gone."""
    seen: set[str] = set()
    made: list[MadeFile] = []
    for turn in reversed([t for t in turns if not t.undone]):  # the journal's order: as they ended
        for change in turn.files:
            if change.path in seen:
                continue
            seen.add(change.path)
            if kind(change.after) == "file":
                made.append(MadeFile(change.path, change.verb, turn.label))
    return made


def read_preview(root: Path, relpath: str) -> Preview:
    """What the panel shows of a workspace file (blocking)."""
    suffix = PurePosixPath(relpath).suffix.lower()
    try:
        if suffix in IMAGES:  # a picture too large to show: only its first bytes, to tell whether it runs
            size, mode, data = read_head(root, relpath, IMAGE_BYTES, over=SNIFF)
        else:  # a longer text: its beginning, cut
            size, mode, data = read_head(root, relpath, PREVIEW_BYTES, over=PREVIEW_BYTES + 1)
    except FileNotFoundError:
        return Preview(relpath, "none", note="This file is no longer in the workspace.", runs="it is gone",
                       readable=False)
    except OSError as exc:
        why = access.report(exc, relpath)
        return Preview(relpath, "none", note=f"Not shown: {why}", runs=why, readable=False)
    runs = could_run(root, relpath, suffix, mode, data)
    if suffix in IMAGES:
        if size > IMAGE_BYTES:
            return Preview(relpath, "none", note=f"A picture of {human_size(size)}: too large to preview.", runs=runs)
        return Preview(relpath, "image", data=data, runs=runs)
    cut = len(data) > PREVIEW_BYTES
    data = data[:PREVIEW_BYTES]
    text = _text(data, cut)
    if text is None:
        return Preview(relpath, "none", note=f"A binary file of {human_size(size)}: nothing to show as text.",
                       runs=runs)
    note = f"The first {human_size(PREVIEW_BYTES)} of {human_size(size)} are shown." if cut else ""
    shown: Kind = "markdown" if suffix in MARKDOWN else "html" if suffix in HTML else "text"
    return Preview(relpath, shown, text=text, note=note, runs=runs)


def folder_of(root: Path, relpath: str) -> Path | None:
    """The folder holding a workspace file, for Show in folder: None unless it is a folder inside the workspace
    (a link on the way that leads out is refused, as every access is)."""
    parent = str(PurePosixPath(relpath).parent)
    parent = "" if parent == "." else parent
    return root / parent if access.kind(root, parent) == "dir" else None


def _text(data: bytes, cut: bool) -> str | None:
    if b"\0" in data[:SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 4:  # a character cut in two at the end
            return data[:exc.start].decode("utf-8")
        return None

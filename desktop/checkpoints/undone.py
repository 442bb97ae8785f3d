"""The files an undo must ask about, and the copies it keeps of those it overwrites.

A file changed since the turn (by the person, a later turn, anything) holds work the turn's before-state does
not; a memory file may hold what Dream or the memory window put there. Putting either back is the person's
choice, and when they make it, what the file holds now is first copied to `checkpoints/overwritten/<when>/`
in the data folder, under its workspace path, where they can take it back from (the undo says where). Those
copies are never tidied away: they exist only because someone chose to overwrite their work.

The copy is read through desktop.workspace.access like every workspace read (a link on the way is not followed
out), streamed (no size cap: it is the person's work), and written to a temporary name then renamed."""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from desktop.checkpoints.journal import State
from desktop.workspace import access


@dataclass(frozen=True)
class Conflict:
    path: str
    before: State  # as the turn found it: what undoing puts back
    now: State  # as it is now
    memory: bool  # a memory file: asked about whether or not it changed since
    behind_link: bool = False  # a folder on its way is a link (or a file) now: never written through


def overwritten_folder(checkpoints: Path) -> Path:
    """A new folder's path for one undo's copies, named by the local time (a second undo in the same second
    gets a suffix)."""
    base = checkpoints / "overwritten" / time.strftime("%Y-%m-%d %H-%M-%S")
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name} ({n})")
    return folder


def keep_copies(root: Path, paths: list[str], folder: Path) -> None:
    """Copy each workspace file of `paths` to `folder`/path, as it is now (blocking: run it in a thread)."""
    for path in paths:
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_name(f".{target.name}.tmp")
        with access.open_file(root, path) as source, temp.open("wb") as copy:
            shutil.copyfileobj(source, copy)
            copy.flush()
            os.fsync(copy.fileno())
        os.replace(temp, target)

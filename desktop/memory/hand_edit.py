"""A memory file the person edited by hand (the memory window, Settings → Personalisation): written and recorded
in the memory history the one way, so every hand edit can be seen and undone next to Dream's. The file is
written through desktop.workspace.access (never through a link a sandboxed command left in its place)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from desktop.memory.git_history import GitError, GitHistory
from desktop.workspace import access
from desktop.workspace.layout import TEXT_FILE_LIMIT


class TooLarge(ValueError):
    """Text longer than the app reads such a file at: written, the whole file would be refused (the assistant and
    the memory window would get none of it), so it is not written."""


@dataclass(frozen=True)
class HandEdit:
    rev: str | None  # the history's change for it; None when nothing changed or it could not be recorded
    problem: str = ""  # why the history did not record it, for people ("" when it did)


async def save_by_hand(git: GitHistory, workspace: Path, name: str, text: str) -> HandEdit:
    """Write `text` as the workspace's `name` and record it. Raises OSError when the file cannot be written, and
    TooLarge when it would be over what the app reads (it is left as it was either way); a history that cannot record
    the change does not stop the save, and the result says so."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > TEXT_FILE_LIMIT:
        raise TooLarge(f"{name} would be {size // 1024:,} KB, and the app reads it only up to "
                       f"{TEXT_FILE_LIMIT // 1024} KB: the assistant would get none of it. Shorten it (keep long "
                       "material in a file of the workspace and name that file here)")
    problems = []
    try:
        await git.ensure()  # a first-ever change needs the version before it recorded first
    except GitError as exc:
        problems.append(f"the memory history is unavailable ({exc})")
    await asyncio.to_thread(access.write_text, workspace, name, text)
    try:
        rev = await git.commit([name], f"Edit {name} by hand")
    except GitError as exc:
        problems.append(f"it could not be recorded in the history: {exc}")
        rev = None
    return HandEdit(rev, "; ".join(problems))

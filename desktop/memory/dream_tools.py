"""Dream's file tools: they read, edit and write the memory files, never over a change someone else made meanwhile.

Dream reads the memory files, then waits seconds for the model before it writes. The person may save one of them
in that time (the memory window, Settings → Personalisation, an editor); a write made from what Dream had read
would drop their text without a word. So Dream changes a memory file only while it holds what Dream last saw of
it (read, or wrote itself). Otherwise the tool refuses and says why: the model reads the file again and applies
its finding on top of what the person wrote, or gives it up. Their edit is never the one lost."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from desktop.memory.git_history import FILE_LIMIT
from desktop.tools.base import ToolContext, ToolError, ToolOutput
from desktop.tools.filesystem import EditFileTool, ReadFileTool, WriteFileTool
from desktop.tools.path_guard import PathGuard
from desktop.tools.registry import ToolRegistry
from desktop.workspace import access
from desktop.workspace.layout import MEMORY_FILES


def current_text(workspace: Path, name: str) -> str | None:
    """A file Dream may touch as it is now; None when absent or refused. Blocking."""
    try:
        return access.read_text(workspace, name, FILE_LIMIT)
    except OSError:
        return None


class SeenFiles:
    """What Dream last saw of each memory file, to tell a change made by someone else since."""

    def __init__(self, workspace: Path, seen: dict[str, str | None]) -> None:
        self.workspace = workspace
        self.seen = seen

    @classmethod
    def now(cls, workspace: Path) -> SeenFiles:
        """The memory files as they are now (when Dream reads them for the model). Blocking."""
        return cls(workspace, {name: current_text(workspace, name) for name in MEMORY_FILES})

    def name_of(self, raw: str) -> str | None:
        """The memory file a tool's path names; None for any other (a new skill: nobody else's to keep)."""
        try:
            path = PathGuard(self.workspace).resolve(raw)
            name = path.relative_to(self.workspace.resolve()).as_posix()
        except (ToolError, ValueError):
            return None
        return name if name in MEMORY_FILES else None

    async def check(self, raw: str) -> str | None:
        """Refuse a change to a memory file that is not as Dream last saw it; returns its name (None: no such file)."""
        name = self.name_of(raw)
        if name is not None and await self._read(name) != self.seen.get(name):
            raise ToolError(f"{name} was changed since Dream read it (the person edited it, most likely): read it "
                            "again with read_file and apply the finding to what it holds now, keeping what they "
                            "wrote")
        return name

    async def note(self, name: str | None) -> None:
        """Dream has seen `name` as it is now (it is about to read it, or has just written it)."""
        if name is not None:
            self.seen[name] = await self._read(name)

    async def _read(self, name: str) -> str | None:
        return await asyncio.to_thread(current_text, self.workspace, name)


class _SeenRead(ReadFileTool):
    def __init__(self, guard: PathGuard, seen: SeenFiles) -> None:
        super().__init__(guard)
        self.seen = seen

    async def execute(self, ctx: ToolContext, path: str, **rest: Any) -> ToolOutput:  # type: ignore[override]
        await self.seen.note(self.seen.name_of(path))  # before reading: an edit in between is then refused later
        return await super().execute(ctx, path, **rest)


class _SeenWrite(WriteFileTool):
    def __init__(self, guard: PathGuard, seen: SeenFiles) -> None:
        super().__init__(guard)
        self.seen = seen

    async def execute(self, ctx: ToolContext, path: str, **rest: Any) -> ToolOutput:  # type: ignore[override]
        name = await self.seen.check(path)
        written = await super().execute(ctx, path, **rest)
        await self.seen.note(name)
        return written


class _SeenEdit(EditFileTool):
    def __init__(self, guard: PathGuard, seen: SeenFiles) -> None:
        super().__init__(guard)
        self.seen = seen

    async def execute(self, ctx: ToolContext, path: str, **rest: Any) -> ToolOutput:  # type: ignore[override]
        name = await self.seen.check(path)
        edited = await super().execute(ctx, path, **rest)
        await self.seen.note(name)
        return edited


def dream_tools(guard: PathGuard, seen: SeenFiles) -> ToolRegistry:
    """read_file, edit_file and write_file for Dream's apply phase, keeping every change made meanwhile."""
    return ToolRegistry([_SeenRead(guard, seen), _SeenEdit(guard, seen), _SeenWrite(guard, seen)])

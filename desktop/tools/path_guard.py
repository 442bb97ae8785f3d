"""Path resolution for file tools: relative to the workspace, and confined to it when restricted."""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path

from desktop.kernel.paths import inside
from desktop.tools.base import ToolError


@dataclass
class PathGuard:
    """Resolves user/model paths. With `restrict`, every path (after symlinks) must stay inside the
    workspace; `read_only_extras` (built-in skills) may be read but never written."""

    workspace: Path
    restrict: bool = True
    read_only_extras: list[Path] = field(default_factory=list)
    protected: list[Path] = field(default_factory=list)  # never written by tools (e.g. history.jsonl)

    def resolve(self, raw: str, *, write: bool = False) -> Path:
        if not raw or "\x00" in raw:
            raise ToolError("path is empty or contains a NUL byte")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        resolved = candidate.resolve()
        if write and any(resolved == p.resolve() for p in self.protected):
            raise ToolError(f"{raw} is managed by the app and cannot be written by tools")
        if not self.restrict:
            return resolved
        if _hard_linked(resolved):
            raise ToolError(f"{raw} is a hard link: the same file also lives elsewhere, maybe outside the "
                            "workspace, so tools leave it alone (copy it if it belongs here)")
        if inside(resolved, self.workspace.resolve()):
            return resolved
        if not write and any(inside(resolved, extra.resolve()) for extra in self.read_only_extras):
            return resolved
        raise ToolError(f"access denied: {raw} is outside the workspace {self.workspace} "
                        "(tools are restricted to the workspace)")

    def confine(self, resolved: Path) -> tuple[Path, str] | None:
        """The root a path from `resolve` is opened within, and its path there; None when unrestricted.
        `resolve` looked at the path as it was: a command running meanwhile could swap a folder on the way
        for a link. Opening through desktop.workspace.access within this root makes the open itself refuse
        to leave, whatever changed since."""
        if not self.restrict:
            return None
        for root in (self.workspace.resolve(), *(extra.resolve() for extra in self.read_only_extras)):
            if inside(resolved, root):
                return root, resolved.relative_to(root).as_posix()
        raise ToolError(f"access denied: {resolved} is outside the workspace {self.workspace}")


def _hard_linked(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:  # missing (a new file) or unreadable: the tool itself reports that
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink > 1

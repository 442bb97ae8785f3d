"""The workspace folder: first-run templates, and which bootstrap files still hold them."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from desktop.paths import bundled

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
_TEMPLATE_TARGETS = {
    "AGENTS.md": "AGENTS.md", "SOUL.md": "SOUL.md", "USER.md": "USER.md", "TOOLS.md": "TOOLS.md",
    "HEARTBEAT.md": "HEARTBEAT.md", "MEMORY.md": "memory/MEMORY.md",
}


@cache
def template_text(name: str) -> str:
    """A shipped template (read once: every system prompt compares the bootstrap files with them)."""
    return (bundled("resources") / "templates" / name).read_text(encoding="utf-8")


def ensure_workspace(workspace: Path) -> list[Path]:
    """Create the workspace and write missing templates; never overwrite. Returns files created."""
    created = []
    (workspace / "skills").mkdir(parents=True, exist_ok=True)
    (workspace / "memory").mkdir(parents=True, exist_ok=True)
    for template, target in _TEMPLATE_TARGETS.items():
        path = workspace / target
        if not path.exists():
            path.write_text(template_text(template), encoding="utf-8")
            created.append(path)
    return created


def is_untouched_template(path: Path) -> bool:
    template = next((t for t, target in _TEMPLATE_TARGETS.items() if Path(target).name == path.name), None)
    if template is None or not path.exists():
        return False
    return path.read_text(encoding="utf-8").strip() == template_text(template).strip()

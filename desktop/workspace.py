"""The workspace folder's layout: first-run templates, prompt files, and the names of the memory files."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from desktop.paths import bundled

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
MEMORY_FILE = "memory/MEMORY.md"
HISTORY_FILE = "memory/history.jsonl"
DREAM_CURSOR_FILE = "memory/.dream_cursor"
MEMORY_FILES = ("USER.md", "SOUL.md", MEMORY_FILE)  # what Dream and the memory window may change
APP_MANAGED_FILES = (HISTORY_FILE, DREAM_CURSOR_FILE)  # only the app writes these; tools may read them
_TEMPLATE_TARGETS = {
    "AGENTS.md": "AGENTS.md", "SOUL.md": "SOUL.md", "USER.md": "USER.md", "TOOLS.md": "TOOLS.md",
    "HEARTBEAT.md": "HEARTBEAT.md", "MEMORY.md": MEMORY_FILE,
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


def prompt_text(name: str, workspace: Path) -> str:
    """A prompt file from resources/prompts, unless the user overrides it in <workspace>/prompts."""
    override = workspace / "prompts" / name
    if override.is_file():
        return override.read_text(encoding="utf-8")
    return (bundled("resources") / "prompts" / name).read_text(encoding="utf-8")

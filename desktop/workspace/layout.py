"""The workspace folder's layout: first-run templates, prompt files, and the names of the memory files.

Every file here is read and written through desktop.workspace.access: sandboxed commands write the workspace,
so a template is created only where the name is free (never through a link someone left there) and a prompt
override that leads out of the workspace is refused in favour of the shipped prompt."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from desktop.kernel.paths import bundled
from desktop.workspace import access

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")
MEMORY_FILE = "memory/MEMORY.md"
HISTORY_FILE = "memory/history.jsonl"
DREAM_CURSOR_FILE = "memory/.dream_cursor"
MEMORY_FILES = ("USER.md", "SOUL.md", MEMORY_FILE)  # what Dream and the memory window may change
APP_MANAGED_FILES = (HISTORY_FILE, DREAM_CURSOR_FILE)  # only the app writes these; tools may read them
# The largest bootstrap, memory, heartbeat or prompt file the app reads (~130k tokens: more than any prompt
# has room for). A larger one is refused whole and the person is told, rather than cut somewhere unseen.
TEXT_FILE_LIMIT = 512 * 1024
_TEMPLATE_TARGETS = {
    "AGENTS.md": "AGENTS.md", "SOUL.md": "SOUL.md", "USER.md": "USER.md", "TOOLS.md": "TOOLS.md",
    "HEARTBEAT.md": "HEARTBEAT.md", "MEMORY.md": MEMORY_FILE,
}
_TEMPLATE_BY_NAME = {target.rsplit("/", 1)[-1]: template for template, target in _TEMPLATE_TARGETS.items()}


@cache
def template_text(name: str) -> str:
    """A shipped template (read once: every system prompt compares the bootstrap files with them)."""
    return (bundled("resources") / "templates" / name).read_text(encoding="utf-8")


def ensure_workspace(workspace: Path) -> list[Path]:
    """Create the workspace and write missing templates; never overwrite, never write through a link.
    Returns files created."""
    created = []
    workspace.mkdir(parents=True, exist_ok=True)
    for folder in ("skills", "memory"):
        try:
            with access.opened_dir(workspace, folder, create=True):
                pass
        except OSError as exc:
            access.report(exc, folder)
    for template, target in _TEMPLATE_TARGETS.items():
        try:
            if access.create_text(workspace, target, template_text(template)):
                created.append(workspace / target)
        except OSError as exc:
            access.report(exc, target)
    return created


def is_untouched_template(name: str, text: str) -> bool:
    """Whether `text`, read from the workspace file `name`, is still the shipped template for it."""
    template = _TEMPLATE_BY_NAME.get(name.rsplit("/", 1)[-1])
    return template is not None and text.strip() == template_text(template).strip()


def prompt_text(name: str, workspace: Path) -> str:
    """A prompt file from resources/prompts, unless the user overrides it in <workspace>/prompts (an
    override that may not be read is reported, and the shipped prompt used)."""
    text, _refused = access.load_text(workspace, f"prompts/{name}", TEXT_FILE_LIMIT)
    if text:
        return text
    return (bundled("resources") / "prompts" / name).read_text(encoding="utf-8")

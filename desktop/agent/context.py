"""Builds what the model sees: a stable system prompt plus the history and the new user message.

The bootstrap and memory files come from the workspace, which sandboxed commands write: they are read through
desktop.workspace.access, so one that became a link out of the workspace, a pipe or a huge file gives the
model a line saying it was not read (and why, so it can tell the user), never its contents."""

from __future__ import annotations

import base64
import mimetypes
import platform
import sys
from datetime import datetime
from pathlib import Path
from string import Template
from typing import Any, Literal

from desktop.scheduler.schedules import local_zone_name
from desktop.skills.loader import SkillsLoader
from desktop.workspace import access
from desktop.workspace.layout import BOOTSTRAP_FILES, MEMORY_FILE, TEXT_FILE_LIMIT, is_untouched_template, prompt_text

SEPARATOR = "\n\n---\n\n"
IMAGE_LIMIT = 20 * 1024 * 1024  # an attached image larger than this is named, not sent
Section = Literal["system", "memory", "skills"]  # identity and bootstrap files; MEMORY.md; the skills


class ContextBuilder:
    def __init__(self, workspace: Path, skills: SkillsLoader | None = None) -> None:
        self.workspace = workspace
        self.skills = skills

    def system_prompt(self) -> str:
        """Identity, bootstrap files, memory, skills. Stable across turns for caching."""
        return SEPARATOR.join(text for _, text in self.system_sections())

    def system_sections(self) -> list[tuple[Section, str]]:
        """The system prompt's sections in order, each with what it is: the one assembly both the prompt and
        the chat's context gauge (desktop/memory/context_use.py) read, so the gauge shows what is sent."""
        sections: list[tuple[Section, str]] = [("system", self._identity())]
        for name, heading in [*((n, f"## {n}") for n in BOOTSTRAP_FILES), (MEMORY_FILE, "# Memory")]:
            section: Section = "memory" if name == MEMORY_FILE else "system"
            text, refused = access.load_text(self.workspace, name, TEXT_FILE_LIMIT)
            if refused:
                sections.append((section, f"{heading}\n\n[Not read: {refused}. Tell the user if it matters.]"))
            elif text.strip() and not is_untouched_template(name, text):
                sections.append((section, f"{heading}\n\n{text.strip()}"))
        if self.skills is not None:
            sections.extend(("skills", text) for text in self.skills.prompt_sections())
        return sections

    def build_messages(self, history: list[dict[str, Any]], content: str, session_key: str, *,
                       media: list[str] | None = None) -> list[dict[str, Any]]:
        runtime = runtime_block(session_key)
        mentioned = self.skills.expand_mentions(content) if self.skills is not None else ""
        if mentioned:  # `$skill-name` inlines that skill for this turn only (never saved in the session)
            runtime = f"{runtime}\n\n{mentioned}"
        return [{"role": "system", "content": self.system_prompt()}, *history,
                {"role": "user", "content": user_content(f"{runtime}\n\n{content}", media or [], self.workspace)}]

    def _identity(self) -> str:
        runtime = (f"{platform.system()} {platform.release()} ({platform.machine()}), "
                   f"Python {sys.version.split()[0]}")
        return Template(prompt_text("identity.md", self.workspace)).safe_substitute(
            workspace=str(self.workspace), runtime=runtime).strip()


def runtime_block(session_key: str) -> str:
    """Volatile facts ride on the user message so the system prompt stays cacheable."""
    now = datetime.now().astimezone()
    offset = now.strftime("%z")
    return (f"[Runtime context: metadata, not instructions]\n"
            f"Current time: {now:%Y-%m-%d %H:%M (%A)} {now.tzname()} (UTC{offset[:3]}:{offset[3:]}, "
            f"timezone {local_zone_name()})\nChannel: {session_key}")


def user_content(text: str, media: list[str], workspace: Path) -> str | list[dict[str, Any]]:
    """Images become image parts; one that cannot be sent is named by path (other files are brought into
    the message by desktop.agent.attachments). An image in the workspace is read through
    desktop.workspace.access: the person picked the name, but a sandboxed command may have made that name a
    link to a file it cannot see, and the image would carry it to the model."""
    images: list[dict[str, Any]] = []
    others: list[str] = []
    for item in media:
        mime = mimetypes.guess_type(item)[0] or ""
        data = image_bytes(Path(item), workspace) if mime.startswith("image/") else None
        if data is not None:
            images.append({"type": "image_url",
                           "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}})
        else:
            others.append(item)
    if others:
        text += "\n\nAttached files:\n" + "\n".join(f"- {p}" for p in others)
    if not images:
        return text
    return [{"type": "text", "text": text}, *images]


def image_bytes(path: Path, workspace: Path) -> bytes | None:
    """An attached image's bytes (within the workspace when it lies there, anywhere else as the person
    chose); None when it cannot be read, so it is named instead, like any other attachment. The chat's
    thumbnails read it the same way. A path that reaches the workspace by a link of the person's own is read
    from where it enters it, so a link a command left there is not followed out."""
    path = path.absolute()
    try:
        root, relpath = access.entered(str(path), workspace) or (Path("/"), path.relative_to("/").as_posix())
        return access.read_bytes(root, relpath, IMAGE_LIMIT)
    except OSError as exc:
        access.report(exc, str(path))
        return None

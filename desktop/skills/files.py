"""File work behind the skills window's buttons. Qt-free and blocking: call via asyncio.to_thread.
All of it happens in the workspace's skills folder, through desktop.workspace.access."""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

from desktop.skills.frontmatter import MAX_FILE_BYTES
from desktop.skills.loader import confinement
from desktop.workspace import access


def skeleton(name: str) -> str:
    """A new SKILL.md that loads without a single diagnostic and says what to fill in."""
    title = name.replace("-", " ").capitalize()
    return (f"---\nname: {name}\n"
            "description: Say what this skill does and when to use it, in the words a user would say.\n"
            "metadata:\n  nanobot:\n    emoji: \"✨\"\n---\n\n"
            f"# {title}\n\n"
            "Write the steps the assistant should follow, one per line:\n\n"
            "1. What to check or ask first.\n"
            "2. Which tools or commands to use, with an example.\n"
            "3. What the answer should look like.\n")


def create_skill(skills_dir: Path, name: str) -> Path:
    """Write a skeleton skill; FileExistsError when the name is taken (nothing is touched then)."""
    base, folder = _within(skills_dir)
    with access.opened_dir(base, folder, create=True) as skills:
        os.mkdir(name, dir_fd=skills)  # a link by that name counts as taken
    access.write_text(base, f"{folder}/{name}/SKILL.md", skeleton(name))
    return skills_dir / name / "SKILL.md"


def copy_skill(source: Path, skills_dir: Path) -> Path:
    """Copy a skill folder into `skills_dir` under the same name. Staged in a hidden folder (which
    the loader ignores) and renamed into place, so a failed copy never leaves half a skill; every step is
    made on open folders, so a link planted in the skills folder meanwhile cannot send the copy elsewhere."""
    base, folder = _within(skills_dir)
    name = source.name
    with access.opened_dir(base, folder, create=True) as skills:
        if access.exists_in(skills, name):
            raise FileExistsError(f"{skills_dir / name} already exists")
        staging = f".copy-{secrets.token_hex(6)}"
        os.mkdir(staging, 0o700, dir_fd=skills)
        try:
            stage = access.open_child_dir(skills, staging)
            try:
                os.mkdir(name, 0o755, dir_fd=stage)
                src = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # a built-in or user skill
                dst = access.open_child_dir(stage, name)
                try:
                    access.copy_tree(src, dst)
                finally:
                    os.close(src)
                    os.close(dst)
                os.rename(name, name, src_dir_fd=stage, dst_dir_fd=skills)
            finally:
                os.close(stage)
        finally:
            shutil.rmtree(staging, dir_fd=skills, ignore_errors=True)
    return skills_dir / name / "SKILL.md"


def read_skill_text(skills_dir: Path, name: str) -> str:
    """A workspace skill's SKILL.md for the editor, read through the workspace reader; UnicodeDecodeError
    rather than silently mangling a non-UTF-8 file."""
    base, folder = _within(skills_dir)
    return access.read_bytes(base, f"{folder}/{name}/SKILL.md", MAX_FILE_BYTES).decode("utf-8")


class SkillTooLarge(ValueError):
    """A SKILL.md longer than the app reads: written, the skill would be refused whole, so it is not written."""


def save_skill_text(skills_dir: Path, name: str, text: str) -> None:
    """Save the editor's text atomically (a link planted at SKILL.md is replaced, not written through); SkillTooLarge
    (nothing written) when it is over what the loader and the editor read."""
    data = text.encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise SkillTooLarge(f"SKILL.md would be {len(data) // 1024:,} KB, and the app reads it only up to "
                            f"{MAX_FILE_BYTES // 1024:,} KB: the skill would not load at all. Shorten it (long "
                            "material can go in a file beside it, such as references/notes.md, that it names)")
    base, folder = _within(skills_dir)
    access.write_bytes(base, f"{folder}/{name}/SKILL.md", data)


TRASH = ".trash"  # inside the skills folder: hidden, so the loader skips it; same disk, so a rename


def trash_skill(folder: Path, skills_dir: Path, stamp: str) -> Path:
    """Uninstall a workspace skill by moving its folder to skills/.trash/<name>-<stamp>, whole, where
    the user can take it back. Returns where it went."""
    base, within = _within(skills_dir)
    with access.opened_dir(base, within) as skills:
        try:
            os.mkdir(TRASH, dir_fd=skills)
        except FileExistsError:
            pass
        trash = access.open_child_dir(skills, TRASH)  # a .trash that is a link is refused here
        try:
            target = f"{folder.name}-{stamp}"
            suffix = 1
            while access.exists_in(trash, target):
                suffix += 1
                target = f"{folder.name}-{stamp}-{suffix}"
            os.rename(folder.name, target, src_dir_fd=skills, dst_dir_fd=trash)
        finally:
            os.close(trash)
    return skills_dir / TRASH / target


def _within(skills_dir: Path) -> tuple[Path, str]:
    """The workspace's skills folder as (workspace, "skills"): it is confined to the workspace, not to
    itself, since a sandboxed command could have made the folder itself a link."""
    base, prefix = confinement("workspace", skills_dir)
    return base, prefix.rstrip("/")

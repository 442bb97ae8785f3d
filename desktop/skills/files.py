"""File work behind the skills window's buttons. Qt-free and blocking: call via asyncio.to_thread."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from desktop.atomic import atomic_write_text


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
    """Write a skeleton skill; FileExistsError when the folder is taken (nothing is touched then)."""
    folder = skills_dir / name
    skills_dir.mkdir(parents=True, exist_ok=True)
    folder.mkdir()
    path = folder / "SKILL.md"
    atomic_write_text(path, skeleton(name))
    return path


def copy_skill(source: Path, skills_dir: Path) -> Path:
    """Copy a skill folder into `skills_dir` under the same name. Staged in a hidden folder (which
    the loader ignores) and renamed into place, so a failed copy never leaves half a skill."""
    target = skills_dir / source.name
    if target.exists() or target.is_symlink():
        raise FileExistsError(f"{target} already exists")
    skills_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=skills_dir))
    try:
        shutil.copytree(source, staging / source.name, symlinks=True)
        os.rename(staging / source.name, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target / "SKILL.md"


def read_skill_text(path: Path) -> str:
    """SKILL.md for the editor; UnicodeDecodeError rather than silently mangling a non-UTF-8 file."""
    return path.read_bytes().decode("utf-8")


TRASH = ".trash"  # inside the skills folder: hidden, so the loader skips it; same disk, so a rename


def trash_skill(folder: Path, skills_dir: Path, stamp: str) -> Path:
    """Uninstall a workspace skill by moving its folder to skills/.trash/<name>-<stamp>, whole, where
    the user can take it back. Returns where it went."""
    trash = skills_dir / TRASH
    trash.mkdir(parents=True, exist_ok=True)
    target = trash / f"{folder.name}-{stamp}"
    suffix = 1
    while target.exists() or target.is_symlink():
        suffix += 1
        target = trash / f"{folder.name}-{stamp}-{suffix}"
    os.rename(folder, target)
    return target

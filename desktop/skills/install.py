"""Installing a skill from a folder or a .zip/.skill archive into the workspace's skills folder.

Everything is staged in a hidden folder next to the target first and checked (no absolute paths,
no `..`, no links leading out, a SKILL.md that loads); only then is it moved into place, so a
refused or failed install leaves the skills folder exactly as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from desktop.paths import inside
from desktop.skills.frontmatter import ERROR, SkillDoc, is_valid_name, parse_skill

MAX_ARCHIVE_BYTES = 100 * 1024 * 1024  # uncompressed; a guard against zip bombs
_JUNK = ("__MACOSX",)  # macOS Finder adds this folder to every zip it makes
_DRIVE = re.compile(r"^[A-Za-z]:")


class InstallError(Exception):
    """Why a skill was not installed; nothing was changed."""


class SkillExistsError(InstallError):
    """The skill's name is taken; installing again with force=True replaces it."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def install_skill(source: Path, skills_dir: Path, *, force: bool = False) -> SkillDoc:
    """Install `source` as `skills_dir/<name>` and return the installed skill as the loader sees it."""
    if not source.exists():
        raise InstallError(f"{source} does not exist")
    skills_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=skills_dir))
    try:
        content = staging / "content"
        if source.is_dir():
            _copy_folder(source, content)
            container = source.resolve().name
        elif zipfile.is_zipfile(source):
            container = _extract(source, content) or source.stem
        else:
            raise InstallError(f"{source} is neither a folder nor a .zip/.skill archive")
        doc = parse_skill(content / "SKILL.md")
        errors = [d.message for d in doc.diagnostics if d.level == ERROR]
        if errors:
            raise InstallError(f"the skill's SKILL.md cannot be loaded: {'; '.join(errors)}")
        name = doc.declared_name if is_valid_name(doc.declared_name) else container
        if not name or name.startswith(".") or name != Path(name).name:
            raise InstallError(f"cannot tell the skill's name (got '{name}'); set a valid 'name' in SKILL.md")
        target = skills_dir / name
        if target.exists() or target.is_symlink():
            if not force:
                raise SkillExistsError(f"a skill named '{name}' already exists at {target}; "
                                       "use --force to replace it", name)
            old = staging / "old"
            os.replace(target, old)
            try:
                os.replace(content, target)
            except OSError:
                os.replace(old, target)
                raise
        else:
            os.replace(content, target)
        return parse_skill(target / "SKILL.md")
    except OSError as exc:
        raise InstallError(f"could not install {source}: {exc}") from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _copy_folder(source: Path, dest: Path) -> None:
    if not (source / "SKILL.md").is_file():
        raise InstallError(f"{source} has no SKILL.md")
    root = source.resolve()
    for folder, dirs, files in os.walk(source):
        for name in dirs + files:
            path = Path(folder, name)
            if path.is_symlink():
                link = os.readlink(path)
                if os.path.isabs(link) or not inside(path.resolve(), root):
                    raise InstallError(f"{path} is a link to {link}, outside the skill folder")
    shutil.copytree(source, dest, symlinks=True)


def _extract(archive: Path, dest: Path) -> str:
    """Extract a skill archive into `dest`. Returns the name of its single top-level folder, or ""
    when SKILL.md sits at the archive's top."""
    with zipfile.ZipFile(archive) as zf:
        members = [(info, _member_path(info.filename)) for info in zf.infolist()]
        members = [(info, rel) for info, rel in members if rel.parts and rel.parts[0] not in _JUNK]
        if sum(info.file_size for info, _ in members) > MAX_ARCHIVE_BYTES:
            raise InstallError(f"{archive} unpacks to more than {MAX_ARCHIVE_BYTES // 2**20} MB")
        files = {rel for info, rel in members if not info.is_dir()}
        tops = {rel.parts[0] for _, rel in members}
        if PurePosixPath("SKILL.md") in files:
            prefix = ""
        elif len(tops) == 1 and PurePosixPath(next(iter(tops)), "SKILL.md") in files:
            prefix = next(iter(tops))
        else:
            raise InstallError(f"{archive} has no SKILL.md at its top or in a single top-level folder")
        dest.mkdir()
        root = dest.resolve()
        for info, rel in members:
            parts = rel.parts[1:] if prefix else rel.parts
            if not parts:
                continue
            path = dest.joinpath(*parts)
            if not inside(path.parent.resolve(), root):
                raise InstallError(f"archive entry {info.filename} would be written outside the skill folder")
            mode = info.external_attr >> 16
            if info.is_dir():
                path.mkdir(parents=True, exist_ok=True)
            elif stat.S_ISLNK(mode):
                _link(path, zf.read(info).decode("utf-8", "replace"), root, info.filename)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(path, "wb") as out:
                    shutil.copyfileobj(src, out)
                if mode & 0o111:
                    path.chmod(0o755)  # keep scripts runnable
    return prefix


def _member_path(name: str) -> PurePosixPath:
    """An archive entry as a relative path; absolute paths and `..` are refused outright."""
    clean = name.replace("\\", "/")
    if clean.startswith("/") or _DRIVE.match(clean):
        raise InstallError(f"archive entry {name} has an absolute path")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise InstallError(f"archive entry {name} contains '..'")
    return PurePosixPath(*parts)


def _link(path: Path, target: str, root: Path, entry: str) -> None:
    if os.path.isabs(target.replace("\\", "/")) or _DRIVE.match(target):
        raise InstallError(f"archive entry {entry} is a link to an absolute path ({target})")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)
    if not inside(path.resolve(), root):
        raise InstallError(f"archive entry {entry} is a link to {target}, outside the skill folder")


"""Installing a skill from a folder or a .zip/.skill archive into the workspace's skills folder.

Everything is staged in a hidden folder next to the target first and checked (no absolute paths,
no `..`, no links leading out, a SKILL.md that loads); only then is it moved into place, so a
refused or failed install leaves the skills folder exactly as it was. The skills folder is workspace
content, so all of it is written through desktop.workspace.access and open folders: a link a sandboxed
command planted there cannot send the install outside the workspace.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath

from desktop.skills.frontmatter import ERROR, SkillDoc, is_valid_name, parse_skill
from desktop.skills.loader import confinement
from desktop.workspace import access

MAX_ARCHIVE_BYTES = 100 * 1024 * 1024  # uncompressed; a guard against zip bombs (and a folder's files, in all)
MAX_FOLDER_NAMES = 10_000  # files and folders in a skill folder installed: no skill has near this many
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
    base, prefix = confinement("workspace", skills_dir)
    folder = prefix.rstrip("/")
    try:
        with access.opened_dir(base, folder, create=True) as skills:
            staging = f".install-{secrets.token_hex(6)}"
            os.mkdir(staging, 0o700, dir_fd=skills)
            try:
                return _install(source, base, folder, skills, staging, force)
            finally:
                shutil.rmtree(staging, dir_fd=skills, ignore_errors=True)
    except OSError as exc:
        raise InstallError(f"could not install {source}: {exc}") from exc


def _install(source: Path, base: Path, folder: str, skills: int, staging: str, force: bool) -> SkillDoc:
    """The install proper, inside an open skills folder: the skill is made in `staging`, checked, then
    renamed into place by descriptors (a link planted meanwhile is moved aside whole, never followed)."""
    stage = access.open_child_dir(skills, staging)
    try:
        content = f"{folder}/{staging}/content"
        if source.is_dir():
            _copy_folder(source, stage, base / content)
            container = source.resolve().name
        elif source.is_file() and zipfile.is_zipfile(source):  # a named pipe would be waited on forever
            container = _extract(source, base, content) or source.stem
        elif source.suffix.lower() in (".zip", ".skill"):
            raise InstallError(f"{source} is not a zip archive that can be read: damaged, or not fully downloaded?")
        else:
            raise InstallError(f"{source} is neither a folder nor a .zip/.skill archive")
        doc = parse_skill(base / content / "SKILL.md", base)
        errors = [d.message for d in doc.diagnostics if d.level == ERROR]
        if errors:
            raise InstallError(f"the skill's SKILL.md cannot be loaded: {'; '.join(errors)}")
        name = doc.declared_name if is_valid_name(doc.declared_name) else container
        if not name or name.startswith(".") or name != Path(name).name:
            raise InstallError(f"cannot tell the skill's name (got '{name}'); set a valid 'name' in SKILL.md")
        if access.exists_in(skills, name):
            if not force:
                raise SkillExistsError(f"a skill named '{name}' already exists at {base / folder / name}; "
                                       "use --force to replace it", name)
            os.rename(name, "old", src_dir_fd=skills, dst_dir_fd=stage)
            try:
                os.rename("content", name, src_dir_fd=stage, dst_dir_fd=skills)
            except OSError:
                os.rename("old", name, src_dir_fd=stage, dst_dir_fd=skills)
                raise
        else:
            os.rename("content", name, src_dir_fd=stage, dst_dir_fd=skills)
    finally:
        os.close(stage)
    return parse_skill(base / folder / name / "SKILL.md", base)


def _copy_folder(source: Path, stage: int, copied: Path) -> None:
    """Copy a skill folder into the staging folder as `content` (the path `copied`), held to an archive's limits
    while it is copied (it may be in the workspace, where a command can leave gigabytes or millions of files, and
    go on writing more meanwhile), then refuse links in the copy that lead out of it."""
    if not (source / "SKILL.md").is_file():
        raise InstallError(f"{source} has no SKILL.md")
    os.mkdir("content", 0o755, dir_fd=stage)
    src = os.open(source, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    dst = access.open_child_dir(stage, "content")
    try:
        links = access.copy_tree(src, dst, access.CopyLimits(MAX_FOLDER_NAMES, MAX_ARCHIVE_BYTES))
    except access.TooLarge as exc:
        raise InstallError(f"{source} cannot be installed: {exc}; a skill needs far less") from None
    finally:
        os.close(src)
        os.close(dst)
    for relpath in links:
        try:
            access.file_stat(copied, relpath)
        except access.Refused:
            raise InstallError(f"{source / relpath} is a link leading outside the skill folder") from None
        except OSError:
            pass  # dangling inside the skill: harmless


def _extract(archive: Path, base: Path, content: str) -> str:
    """Extract a skill archive into `content` (a path under `base`, written through the workspace writer).
    Returns the name of its single top-level folder, or "" when SKILL.md sits at the archive's top."""
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
        with access.opened_dir(base, content, create=True):
            pass
        links: list[tuple[str, str]] = []
        for info, rel in members:
            parts = rel.parts[1:] if prefix else rel.parts
            if not parts:
                continue
            where = "/".join((content, *parts))
            mode = info.external_attr >> 16
            if info.is_dir():
                with access.opened_dir(base, where, create=True):
                    pass
            elif stat.S_ISLNK(mode):
                target = zf.read(info).decode("utf-8", "replace")
                _link(base, content, parts, target, info.filename)
                links.append(("/".join(parts), info.filename))
            else:
                access.write_bytes(base, where, zf.read(info), mode=0o755 if mode & 0o111 else None)
    for relpath, entry in links:  # links through links: judged once all of them exist
        try:
            access.file_stat(base / content, relpath)
        except access.Refused:
            raise InstallError(f"archive entry {entry} is a link leading outside the skill folder") from None
        except OSError:
            pass  # dangling inside the skill: harmless
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


def _link(base: Path, content: str, parts: tuple[str, ...], target: str, entry: str) -> None:
    """A link from the archive, kept when it stays inside the skill: judged on its text, before it exists."""
    clean = target.replace("\\", "/")
    if clean.startswith("/") or _DRIVE.match(clean):
        raise InstallError(f"archive entry {entry} is a link to an absolute path ({target})")
    depth = len(parts) - 1  # folders between the skill's top and the link
    for part in clean.split("/"):
        depth += -1 if part == ".." else 0 if part in ("", ".") else 1
        if depth < 0:
            raise InstallError(f"archive entry {entry} is a link to {target}, outside the skill folder")
    with access.opened_dir(base, "/".join((content, *parts[:-1])), create=True) as folder:
        os.symlink(target, parts[-1], dir_fd=folder)

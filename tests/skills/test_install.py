"""Installing skills from folders and archives, and the refusals that keep the skills folder safe."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from desktop.skills.install import MAX_FOLDER_NAMES, InstallError, install_skill

SKILL_MD = "---\nname: {name}\ndescription: Does {name} things.\n---\nSteps for {name}.\n"


def skill_folder(parent: Path, name: str) -> Path:
    folder = parent / name
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name), encoding="utf-8")
    (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho hi\n")
    return folder


def make_zip(path: Path, files: dict[str, str], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    return tmp_path / "workspace" / "skills"


def test_install_folder(tmp_path: Path, skills_dir: Path) -> None:
    source = skill_folder(tmp_path / "downloads", "pdf-tools")
    doc = install_skill(source, skills_dir)
    assert doc.path == skills_dir / "pdf-tools" / "SKILL.md" and doc.diagnostics == ()
    assert tree(skills_dir) == ["pdf-tools", "pdf-tools/SKILL.md", "pdf-tools/scripts", "pdf-tools/scripts/run.sh"]


def test_install_zip_with_top_folder_and_skill_archive_with_root_files(tmp_path: Path, skills_dir: Path) -> None:
    nested = make_zip(tmp_path / "bundle.zip", {"notes/SKILL.md": SKILL_MD.format(name="notes"),
                                                "notes/references/guide.md": "guide",
                                                "__MACOSX/notes/._SKILL.md": "junk"})
    flat = make_zip(tmp_path / "whatever-1.2.skill", {"SKILL.md": SKILL_MD.format(name="flat"), "assets/a.txt": "a"})
    assert install_skill(nested, skills_dir).name == "notes"
    assert install_skill(flat, skills_dir).name == "flat"  # named by its frontmatter, not the file
    assert tree(skills_dir) == ["flat", "flat/SKILL.md", "flat/assets", "flat/assets/a.txt",
                                "notes", "notes/SKILL.md", "notes/references", "notes/references/guide.md"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_zip_keeps_scripts_executable(tmp_path: Path, skills_dir: Path) -> None:
    archive = tmp_path / "x.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("x/SKILL.md", SKILL_MD.format(name="x"))
        info = zipfile.ZipInfo("x/scripts/go.sh")
        info.external_attr = (stat.S_IFREG | 0o755) << 16
        zf.writestr(info, "#!/bin/sh\n")
    install_skill(archive, skills_dir)
    assert os.access(skills_dir / "x" / "scripts" / "go.sh", os.X_OK)


@pytest.mark.parametrize(("files", "links", "reason"), [
    ({"evil/SKILL.md": SKILL_MD.format(name="evil"), "evil/../../outside.txt": "x"}, {}, "contains '..'"),
    ({"SKILL.md": SKILL_MD.format(name="evil"), "/etc/evil.txt": "x"}, {}, "absolute path"),
    ({"SKILL.md": SKILL_MD.format(name="evil"), "C:\\evil.txt": "x"}, {}, "absolute path"),
    ({"SKILL.md": SKILL_MD.format(name="evil")}, {"link": "/etc/passwd"}, "link to an absolute path"),
    ({"SKILL.md": SKILL_MD.format(name="evil")}, {"link": "../../outside"}, "outside the skill folder"),
    ({"SKILL.md": SKILL_MD.format(name="evil")}, {"sub/up": "..", "escape": "sub/up/.."}, "outside the skill folder"),
    ({"a/SKILL.md": SKILL_MD.format(name="a"), "b/SKILL.md": SKILL_MD.format(name="b")}, {}, "no SKILL.md at its top"),
    ({"SKILL.md": "---\nname: evil\n---\nno description\n"}, {}, "no description"),
])
def test_archive_refusals_leave_nothing_behind(tmp_path: Path, skills_dir: Path, files: dict[str, str],
                                               links: dict[str, str], reason: str) -> None:
    if links and sys.platform == "win32":
        pytest.skip("symlinks need privileges on Windows")
    archive = make_zip(tmp_path / "evil.zip", files, links)
    with pytest.raises(InstallError, match=reason):
        install_skill(archive, skills_dir)
    assert tree(skills_dir) == []  # not even a staging folder
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "outside").exists()


def test_internal_links_are_kept(tmp_path: Path, skills_dir: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("symlinks need privileges on Windows")
    archive = make_zip(tmp_path / "ok.zip", {"ok/SKILL.md": SKILL_MD.format(name="ok"), "ok/docs/a.md": "A"},
                       {"ok/latest.md": "docs/a.md"})
    install_skill(archive, skills_dir)
    assert (skills_dir / "ok" / "latest.md").read_text() == "A"


def test_folder_with_link_leading_out_is_refused(tmp_path: Path, skills_dir: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("symlinks need privileges on Windows")
    (tmp_path / "secret.txt").write_text("secret")
    source = skill_folder(tmp_path / "downloads", "leaky")
    (source / "data").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(InstallError, match="outside the skill folder"):
        install_skill(source, skills_dir)
    assert tree(skills_dir) == []


def test_overwrite_needs_force_and_then_replaces(tmp_path: Path, skills_dir: Path) -> None:
    install_skill(skill_folder(tmp_path / "v1", "tool"), skills_dir)
    (skills_dir / "tool" / "notes.md").write_text("my local notes")
    newer = skill_folder(tmp_path / "v2", "tool")
    (newer / "SKILL.md").write_text(SKILL_MD.format(name="tool").replace("Steps", "New steps"), encoding="utf-8")
    with pytest.raises(InstallError, match="already exists.*--force"):
        install_skill(newer, skills_dir)
    assert (skills_dir / "tool" / "notes.md").read_text() == "my local notes"
    assert "New steps" not in (skills_dir / "tool" / "SKILL.md").read_text()

    install_skill(newer, skills_dir, force=True)
    assert "New steps" in (skills_dir / "tool" / "SKILL.md").read_text()
    assert tree(skills_dir) == ["tool", "tool/SKILL.md", "tool/scripts", "tool/scripts/run.sh"]


def test_other_files_and_missing_paths_are_refused(tmp_path: Path, skills_dir: Path) -> None:
    (tmp_path / "notes.txt").write_text("not an archive")
    with pytest.raises(InstallError, match="neither a folder nor"):
        install_skill(tmp_path / "notes.txt", skills_dir)
    with pytest.raises(InstallError, match="does not exist"):
        install_skill(tmp_path / "nope.zip", skills_dir)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InstallError, match="has no SKILL.md"):
        install_skill(tmp_path / "empty", skills_dir)
    assert tree(skills_dir) == []


@pytest.mark.parametrize("fill, reason", [
    (lambda folder: os.truncate(folder / "data.bin", 0) or os.truncate(folder / "data.bin", 200 * 2**20),
     "holds more than 100 MB"),
    (lambda folder: [(folder / "many" / f"{i}.txt").touch() for i in range(MAX_FOLDER_NAMES + 1)],
     "holds more than 10,000 files and folders"),
], ids=["a file of 200 MB", "more names than any skill has"])
def test_a_folder_larger_than_an_archive_may_be_is_refused_and_nothing_of_it_kept(
        tmp_path: Path, skills_dir: Path, fill: Any, reason: str) -> None:
    """An archive is refused past 100 MB, but a folder was copied whole, however large or many its files: a
    sandboxed command can leave a gigabyte or a million files in a workspace folder a person then installs,
    each byte copied by the app into the skills folder. Now a folder is held to the archive's limits."""
    folder = skill_folder(tmp_path, "heavy")
    (folder / "data.bin").touch()
    (folder / "many").mkdir()
    fill(folder)
    with pytest.raises(InstallError, match=reason):
        install_skill(folder, skills_dir)
    assert tree(skills_dir) == []


def test_a_folder_nested_deeper_than_any_skill_is_refused_in_words(tmp_path: Path, skills_dir: Path) -> None:
    """A chain of folders a sandboxed command nests in a moment (`mkdir d && cd d`, over and over): installing the
    folder ended in 'maximum recursion depth exceeded', an internal error naming nothing the person could fix."""
    folder = skill_folder(tmp_path, "deep")
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(1200):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    try:
        with pytest.raises(InstallError, match="its folders are nested more than 100 deep"):
            install_skill(folder, skills_dir)
        assert tree(skills_dir) == []
    finally:  # rm goes down without recursing; pytest's clean-up of old temporary folders would not get far
        subprocess.run(["rm", "-rf", str(folder / "d")], check=True, timeout=60)

"""`nanobot-tray skills` given what it cannot install, in-process."""

from __future__ import annotations

import os
from pathlib import Path

from tests.cli.in_process import run_main
from tests.cli.test_cli import run_cli


def test_install_of_a_damaged_archive_says_so_not_that_it_is_no_archive(tmp_path: Path) -> None:
    """A download cut short: it was called 'neither a folder nor a .zip/.skill archive', which it plainly is."""
    for name in ("weather.zip", "weather.skill"):
        archive = tmp_path / name
        archive.write_bytes(b"PK\x03\x04cut short")
        result = run_main(tmp_path / "home", "skills", "install", str(archive))
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr == f"error: {archive} is not a zip archive that can be read: damaged, or not fully " \
                                "downloaded?\n"
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = run_main(tmp_path / "home", "skills", "install", str(notes))
    assert result.stderr == f"error: {notes} is neither a folder nor a .zip/.skill archive\n"


def test_install_of_a_named_pipe_is_refused_at_once(tmp_path: Path) -> None:
    """It waited forever for a writer (checking whether it was a zip opened it); run as a process of its own,
    with a bound, so the test ends either way."""
    fifo = tmp_path / "weather.skill"
    os.mkfifo(fifo)
    result = run_cli(tmp_path / "home", "skills", "install", str(fifo))
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == f"error: {fifo} is not a zip archive that can be read: damaged, or not fully " \
                            "downloaded?\n"


def test_check_of_a_file_that_is_not_a_skill_md_says_so(tmp_path: Path) -> None:
    """`skills check notes.txt` read any file as a skill's SKILL.md: "skipped: <its folder> ... SKILL.md has no
    frontmatter", naming a skill that is not there and a file that was not given."""
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = run_main(tmp_path / "home", "skills", "check", str(notes))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (f"error: no SKILL.md found at {notes}; give a skill's folder, its SKILL.md, or a "
                             "folder of skills\n")
    skill = tmp_path / "greet" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: greet\ndescription: Say hello.\n---\nSay hello.\n")
    checked = run_main(tmp_path / "home", "skills", "check", str(skill))
    assert checked.returncode == 0 and checked.stdout.startswith("ok: greet"), checked.stderr

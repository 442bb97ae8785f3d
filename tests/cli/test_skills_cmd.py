"""`nanobot-tray skills` given what it cannot install, in-process."""

from __future__ import annotations

from pathlib import Path

from tests.cli.in_process import run_main


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

"""`nanobot-tray chats list|export` against a chat saved in a real home: what is listed, the file written, and
an existing file never replaced without --force."""

from __future__ import annotations

from pathlib import Path

from desktop.session.session import Session
from tests.chats.conftest import KEY
from tests.cli.in_process import run_main


def test_list_shows_each_chat_with_its_key_and_title(home_dir: Path, chat_file: Session) -> None:
    ran = run_main(home_dir, "chats", "list")
    assert ran.returncode == 0
    (line,) = ran.stdout.splitlines()
    assert line.startswith(KEY + "\t") and line.endswith("\tPlans for <b>Friday</b>")


def test_export_writes_the_file_and_refuses_to_overwrite_without_force(home_dir: Path, chat_file: Session,
                                                                      tmp_path: Path) -> None:
    out = tmp_path / "friday.html"
    ran = run_main(home_dir, "chats", "export", KEY, "--format", "html", "-o", str(out))
    assert ran.returncode == 0 and out.read_text().startswith("<!DOCTYPE html>")
    assert "<strong>two</strong>" in out.read_text()

    out.write_text("my own page")
    ran = run_main(home_dir, "chats", "export", KEY, "--format", "html", "-o", str(out))
    assert ran.returncode == 2 and "exists" in ran.stderr and "--force" in ran.stderr
    assert out.read_text() == "my own page"
    assert run_main(home_dir, "chats", "export", KEY, "-o", str(out), "--force").returncode == 0
    assert out.read_text().startswith("# Plans for <b>Friday</b>")


def test_export_prints_markdown_and_names_an_unknown_key(home_dir: Path, chat_file: Session) -> None:
    ran = run_main(home_dir, "chats", "export", KEY, "--reasoning")
    assert ran.returncode == 0 and "**Reasoning:**" in ran.stdout
    ran = run_main(home_dir, "chats", "export", "desktop:nope")
    assert ran.returncode == 2 and "chats list" in ran.stderr

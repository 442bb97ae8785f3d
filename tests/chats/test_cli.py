"""`nanobot-tray chats list|export` against a chat saved in a real home: what is listed, the file written, and
an existing file never replaced without --force."""

from __future__ import annotations

import asyncio
import zipfile
from pathlib import Path
from urllib.parse import quote

from desktop.session.session import Session, SessionStore
from tests.chats.conftest import KEY
from tests.cli.in_process import run_main


def test_list_shows_each_chat_with_its_key_and_title(home_dir: Path, chat_file: Session) -> None:
    ran = run_main(home_dir, "chats", "list")
    assert ran.returncode == 0
    (line,) = ran.stdout.splitlines()
    assert line.startswith(KEY + "\t") and line.endswith("\tPlans for <b>Friday</b>")


def test_list_keeps_one_chat_to_a_line_of_three_columns_whatever_its_title_holds(home_dir: Path) -> None:
    """A first message with a tab ("Pack:\tshoes") named the chat with it, and `chats list` printed the tab as
    a fourth column, so a script reading the title (cut -f3) got half of it."""
    store = SessionStore(home_dir / "data" / "sessions")
    store.directory.mkdir(parents=True)
    asyncio.run(store.rewrite(Session(KEY, metadata={"title": "Pack:\tshoes\x0b and  socks"})))
    ran = run_main(home_dir, "chats", "list")
    assert ran.returncode == 0
    (line,) = ran.stdout.splitlines()
    assert line.split("\t")[0] == KEY and line.split("\t")[2:] == ["Pack: shoes  and  socks"]


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


def test_export_into_a_folder_that_does_not_exist_says_so_and_makes_none(home_dir: Path, chat_file: Session,
                                                                        tmp_path: Path) -> None:
    """-o ~/Dcouments/plan.md (a slip) made the folder Dcouments and wrote there, where the person never looked."""
    (tmp_path / "Documents").mkdir()
    for argv in ((KEY,), ("--all",)):
        out = tmp_path / "Dcouments" / "plan.md"
        ran = run_main(home_dir, "chats", "export", *argv, "-o", str(out), "--force")
        assert (ran.returncode, ran.stdout) == (2, "")
        assert ran.stderr == (f"error: there is no folder {out.parent}; create it first, or name a file in a folder "
                              "that exists\n")
        assert not out.parent.exists()
    assert run_main(home_dir, "chats", "export", KEY, "-o", str(tmp_path / "Documents" / "plan.md")).returncode == 0


def test_export_prints_markdown_and_names_an_unknown_key(home_dir: Path, chat_file: Session) -> None:
    ran = run_main(home_dir, "chats", "export", KEY, "--reasoning")
    assert ran.returncode == 0 and "**Reasoning:**" in ran.stdout
    ran = run_main(home_dir, "chats", "export", "desktop:nope")
    assert ran.returncode == 2 and "chats list" in ran.stderr


def test_export_all_writes_one_zip_and_says_what_it_needs(home_dir: Path, chat_file: Session, tmp_path: Path) -> None:
    out = tmp_path / "backup.zip"
    ran = run_main(home_dir, "chats", "export", "--all")
    assert ran.returncode == 2 and "-o FILE.zip" in ran.stderr
    ran = run_main(home_dir, "chats", "export")
    assert ran.returncode == 2 and "--all" in ran.stderr and "chats list" in ran.stderr
    ran = run_main(home_dir, "chats", "export", KEY, "--all", "-o", str(out))
    assert ran.returncode == 2 and "not both" in ran.stderr and not out.exists()

    ran = run_main(home_dir, "chats", "export", "--all", "-o", str(out))
    assert ran.returncode == 0 and ran.stdout.strip() == f"Wrote 1 chat to {out}"
    with zipfile.ZipFile(out) as archive:
        (readable,) = [n for n in archive.namelist() if n.startswith("chats/")]
        assert readable.endswith(" Plans for b Friday b.md")
        assert archive.read(readable).decode().startswith("# Plans for <b>Friday</b>")
        assert archive.namelist() == [readable, f"sessions/{quote(KEY, safe='')}.jsonl"]

    out.write_bytes(b"my own file")
    ran = run_main(home_dir, "chats", "export", "--all", "-o", str(out))
    assert ran.returncode == 2 and "--force" in ran.stderr and out.read_bytes() == b"my own file"
    assert run_main(home_dir, "chats", "export", "--all", "-o", str(out), "--force").returncode == 0
    assert zipfile.is_zipfile(out) and not list(tmp_path.glob(".backup.zip.*"))  # no partial file left beside


def test_export_all_of_no_chats_says_so(home_dir: Path, tmp_path: Path) -> None:
    ran = run_main(home_dir, "chats", "export", "--all", "-o", str(tmp_path / "none.zip"))
    assert ran.returncode == 0 and "No saved chats" in ran.stdout and not (tmp_path / "none.zip").exists()

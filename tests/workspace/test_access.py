"""The app's way into the workspace: links that stay inside are followed, every way out is refused before
anything outside is opened, pipes never block, sizes are bounded, and writes never go through a link."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import BinaryIO

import pytest

from desktop.workspace import access as wf

SECRET = "the contents of a file the sandbox hides"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text(SECRET)
    workspace = tmp_path / "ws"
    (workspace / "notes").mkdir(parents=True)
    (workspace / "notes" / "a.md").write_text("inside")
    return workspace


def test_reads_a_plain_file_and_says_when_it_is_absent(ws: Path) -> None:
    assert wf.read_text(ws, "notes/a.md", 100) == "inside"
    with pytest.raises(FileNotFoundError):
        wf.read_text(ws, "notes/missing.md", 100)
    with pytest.raises(FileNotFoundError):
        wf.read_text(ws, "nowhere/a.md", 100)
    assert wf.load_text(ws, "notes/missing.md", 100) == ("", "")


@pytest.mark.parametrize("make", [
    lambda ws: (ws / "USER.md").symlink_to(ws.parent / "outside" / "secret"),
    lambda ws: (ws / "USER.md").symlink_to("../outside/secret"),
    lambda ws: (ws / "USER.md").symlink_to("notes/../../outside/secret"),
    lambda ws: (ws / "USER.md").symlink_to("/proc/self/environ"),
    lambda ws: ((ws / "hop").symlink_to("notes/../.."), (ws / "USER.md").symlink_to("hop/outside/secret")),
    lambda ws: ((ws / "far").symlink_to(ws.parent / "outside"), (ws / "USER.md").symlink_to("far/secret")),
], ids=["absolute", "relative", "climbing", "proc", "via an inner link", "via a linked folder"])
def test_links_that_leave_are_refused_and_never_read(ws: Path, make: object) -> None:
    make(ws)  # type: ignore[operator]
    with pytest.raises(wf.Refused, match="leads outside") as caught:
        wf.read_text(ws, "USER.md", 10_000)
    assert SECRET not in str(caught.value)
    text, why = wf.load_text(ws, "USER.md", 10_000)
    assert text == "" and "leads outside" in why


def test_a_linked_folder_on_the_way_is_refused(ws: Path) -> None:
    (ws / "skills").symlink_to(ws.parent / "outside")
    with pytest.raises(wf.Refused, match="skills is a link that leads outside"):
        wf.read_text(ws, "skills/secret", 10_000)
    with pytest.raises(wf.Refused):
        wf.list_dir(ws, "skills")
    with pytest.raises(wf.Refused):
        wf.file_stat(ws, "skills/secret")
    assert wf.kind(ws, "skills/secret") is None


def test_dotdot_in_the_asked_path_cannot_climb_out(ws: Path) -> None:
    with pytest.raises(wf.Refused, match="leads outside"):
        wf.read_text(ws, "notes/../../outside/secret", 10_000)
    assert wf.read_text(ws, "notes/../notes/a.md", 100) == "inside"


def test_links_that_stay_inside_are_followed(ws: Path) -> None:
    (ws / "USER.md").symlink_to("notes/a.md")
    (ws / "abs.md").symlink_to(ws / "notes" / "a.md")
    (ws / "more").symlink_to("notes")
    (ws / "deep").symlink_to("more/../notes/./a.md")
    for name in ("USER.md", "abs.md", "more/a.md", "deep"):
        assert wf.read_text(ws, name, 100) == "inside", name
    assert [e.name for e in wf.list_dir(ws, "more")] == ["a.md"]
    assert wf.kind(ws, "more") == "dir" and wf.kind(ws, "deep") == "file"


def test_a_workspace_reached_through_a_link_accepts_links_by_either_name(tmp_path: Path, ws: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws)
    (ws / "USER.md").symlink_to(alias / "notes" / "a.md")
    assert wf.read_text(alias, "USER.md", 100) == "inside"


def test_loops_end_in_a_refusal(ws: Path) -> None:
    (ws / "a").symlink_to("b")
    (ws / "b").symlink_to("a")
    (ws / "self").symlink_to("self/x")
    for name in ("a", "self"):
        with pytest.raises(wf.Refused, match="too many links"):
            wf.read_text(ws, name, 100)


@pytest.mark.timeout(10)
def test_a_pipe_or_a_folder_is_refused_without_blocking(ws: Path) -> None:
    os.mkfifo(ws / "MEMORY.md")
    with pytest.raises(wf.Refused, match="named pipe"):
        wf.read_text(ws, "MEMORY.md", 100)
    with pytest.raises(wf.Refused, match="folder"):
        wf.read_text(ws, "notes", 100)
    assert wf.kind(ws, "MEMORY.md") == "other"


@pytest.mark.timeout(10)
def test_a_refusal_names_the_path_asked_for_not_the_folder_it_is_in(ws: Path) -> None:
    """"Not opened: notes is a named pipe" sent the person looking at the wrong thing."""
    os.mkfifo(ws / "notes" / "pipe")
    (ws / "notes" / "deeper" / "folder").mkdir(parents=True)
    (ws / "link").symlink_to("notes/pipe")
    for asked, what in (("notes/pipe", "a named pipe"), ("notes/deeper/folder", "a folder"), ("link", "a named pipe")):
        with pytest.raises(wf.Refused) as refused:
            wf.read_text(ws, asked, 100)
        assert str(refused.value) == f"{asked} is {what}, not a file; the app does not read it"


def test_sizes_are_bounded(ws: Path) -> None:
    (ws / "big.md").write_bytes(b"x" * 5000)
    with pytest.raises(wf.Refused, match=r"big.md is 4\.9 KB; the app reads files up to 4 KB"):
        wf.read_bytes(ws, "big.md", 4096)
    assert len(wf.read_bytes(ws, "big.md", 5000)) == 5000


def test_a_write_replaces_a_link_and_never_writes_through_it(ws: Path) -> None:
    secret = ws.parent / "outside" / "secret"
    (ws / "USER.md").symlink_to(secret)
    wf.write_text(ws, "USER.md", "new")
    assert secret.read_text() == SECRET
    assert not (ws / "USER.md").is_symlink() and (ws / "USER.md").read_text() == "new"


def test_a_write_into_a_linked_folder_is_refused(ws: Path) -> None:
    (ws / "memory").symlink_to(ws.parent / "outside")
    with pytest.raises(wf.Refused):
        wf.write_text(ws, "memory/MEMORY.md", "x")
    with pytest.raises(wf.Refused):
        wf.open_append(ws, "memory/history.jsonl")
    assert sorted(p.name for p in (ws.parent / "outside").iterdir()) == ["secret"]


def test_an_undo_follows_no_link_on_its_way_not_even_one_that_stays_inside(ws: Path) -> None:
    """Undo puts back paths recorded without following links: a folder swapped for a link to another folder of
    the workspace in the instant since its look would take the write to another file (memory/history.jsonl)."""
    (ws / "memory" / "empty").mkdir(parents=True)
    (ws / "memory" / "history.jsonl").write_text("the app's own\n")
    (ws / "drafts").symlink_to("memory")
    with pytest.raises(wf.Refused):
        wf.write_bytes(ws, "drafts/history.jsonl", b"forged", links=False)
    with pytest.raises(wf.Refused):
        wf.remove(ws, "drafts/history.jsonl", links=False)
    with pytest.raises(wf.Refused), wf.opened_dir(ws, "drafts/made", create=True, links=False):
        pass
    assert not wf.remove_empty_dir(ws, "drafts/empty", links=False)
    assert sorted(p.name for p in (ws / "memory").iterdir()) == ["empty", "history.jsonl"]
    assert (ws / "memory" / "history.jsonl").read_text() == "the app's own\n"
    wf.write_bytes(ws, "drafts/history.jsonl", b"followed")  # readers and other writers still follow it inside
    assert (ws / "memory" / "history.jsonl").read_text() == "followed"


def test_writes_make_folders_and_keep_permissions(ws: Path) -> None:
    wf.write_text(ws, "memory/new/MEMORY.md", "a")
    assert (ws / "memory" / "new" / "MEMORY.md").read_text() == "a"
    script = ws / "run.sh"
    script.write_text("old")
    script.chmod(0o755)
    wf.write_text(ws, "run.sh", "new")
    assert script.stat().st_mode & 0o777 == 0o755 and script.read_text() == "new"
    assert not [p for p in ws.rglob("*.tmp")]


def test_create_only_fills_a_free_name(ws: Path) -> None:
    target = ws.parent / "outside" / "planted"
    (ws / "SOUL.md").symlink_to(target)  # dangling: a careless "create if missing" would make it outside
    assert wf.create_text(ws, "SOUL.md", "x") is False
    assert not target.exists()
    assert wf.create_text(ws, "TOOLS.md", "tools") is True
    assert wf.create_text(ws, "TOOLS.md", "again") is False
    assert (ws / "TOOLS.md").read_text() == "tools"


def test_append_refuses_a_link_and_appends_to_a_file(ws: Path) -> None:
    (ws / "log.jsonl").symlink_to(ws.parent / "outside" / "secret")
    with pytest.raises(wf.Refused, match="link"):
        wf.open_append(ws, "log.jsonl")
    with wf.open_append(ws, "memory/history.jsonl") as fh:
        fh.write(b"one\n")
    with wf.open_append(ws, "memory/history.jsonl") as fh:
        fh.write(b"two\n")
    assert (ws / "memory" / "history.jsonl").read_text() == "one\ntwo\n"


def test_remove_takes_the_link_not_its_target(ws: Path) -> None:
    secret = ws.parent / "outside" / "secret"
    (ws / "x").symlink_to(secret)
    assert wf.remove(ws, "x") is True and secret.exists()
    assert wf.remove(ws, "x") is False
    (ws / "skills" / "empty").mkdir(parents=True)
    assert wf.remove_empty_dir(ws, "skills/empty") and not (ws / "skills" / "empty").exists()
    assert not wf.remove_empty_dir(ws, "notes")


def test_listing_shows_links_as_links(ws: Path) -> None:
    (ws / "notes" / "out").symlink_to(ws.parent / "outside")
    (ws / "notes" / "sub").mkdir()
    os.mkfifo(ws / "notes" / "pipe")
    assert {(e.name, e.kind) for e in wf.list_dir(ws, "notes")} == {
        ("a.md", "file"), ("out", "link"), ("sub", "dir"), ("pipe", "other")}
    assert wf.list_dir(ws, "absent") == []


def test_refusals_are_logged_once(ws: Path, caplog: pytest.LogCaptureFixture) -> None:
    (ws / "HEARTBEAT.md").symlink_to(ws.parent / "outside" / "secret")
    for _ in range(3):
        wf.load_text(ws, "HEARTBEAT.md", 100)
    assert [r.getMessage() for r in caplog.records].count(
        f"HEARTBEAT.md is a link that leads outside {ws}; the app does not follow it") == 1


def test_children_are_looked_at_as_a_walk_would(ws: Path) -> None:
    skills = ws / "skills"
    (skills / "plain").mkdir(parents=True)
    (skills / "plain" / "SKILL.md").write_text("x")
    (skills / "inside").symlink_to("plain")
    (skills / "out").symlink_to(ws.parent / "outside")
    (skills / "empty").mkdir()
    (skills / "README").write_text("not a folder")
    (skills / "linked-file").mkdir()
    (skills / "linked-file" / "SKILL.md").symlink_to(ws.parent / "outside" / "secret")
    found = wf.stat_children(ws, "skills", "SKILL.md")
    assert found["plain"].st_size == 1 and found["inside"].st_size == 1  # type: ignore[union-attr]
    assert isinstance(found["out"], wf.Refused) and isinstance(found["linked-file"], wf.Refused)
    assert isinstance(found["empty"], FileNotFoundError) and isinstance(found["README"], NotADirectoryError)
    assert wf.stat_children(ws, "absent", "SKILL.md") == {}


def test_a_small_file_read_under_a_large_limit_takes_only_its_size(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read asked the file for its whole limit at once, and Python sets that much memory aside before the
    file answers: importing an old history allocated 64 MB for each object of a hundred bytes (thousands of
    them), every prompt half a megabyte per file. Now a read asks for the file's size (one byte more, to see it
    grow); a file a command lengthens meanwhile is read whole, or refused whole past its limit."""
    (ws / "small.md").write_text("tiny\n")
    tracemalloc.start()
    try:
        assert wf.read_bytes(ws, "small.md", 64 * 2**20) == b"tiny\n"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak / 2**20:.0f} MB held"

    opened, grows = wf.open_file, ws / "grows.md"
    for grown, read in ((40, b"x" * 40), (60, None)):
        grows.write_bytes(b"x" * 10)

        def open_then_grow(root: Path, relpath: str, limit: int | None = None, grown: int = grown) -> BinaryIO:
            fh = opened(root, relpath, limit)
            grows.write_bytes(b"x" * grown)  # after its size was looked at, before it is read
            return fh

        monkeypatch.setattr(wf, "open_file", open_then_grow)
        if read is None:
            with pytest.raises(wf.Refused, match="larger than 50 bytes"):
                wf.read_bytes(ws, "grows.md", 50)
        else:
            assert wf.read_bytes(ws, "grows.md", 50) == read


@pytest.mark.parametrize("limits, reason", [(wf.CopyLimits(names=3, size=2**20), "holds more than 3 files and folders"),
                                            (wf.CopyLimits(names=100, size=5000), "holds more than 4.9 KB")],
                         ids=["names", "bytes"])
def test_a_copy_is_held_to_its_limits_as_it_copies(ws: Path, limits: wf.CopyLimits, reason: str) -> None:
    """Installing a skill from a folder counted the folder against an archive's limits in a pass of its own, then
    copied whatever was there by then: a command still writing into the folder grew it past them in between, and
    the copy took it all. Now the copy counts what it copies and stops at the limits."""
    for name in range(4):
        (ws / "notes" / f"{name}.txt").write_text("x" * 2000)
    (ws / "copy").mkdir()
    with wf.opened_dir(ws, "notes") as src, wf.opened_dir(ws, "copy") as dst:
        with pytest.raises(wf.TooLarge, match=reason):
            wf.copy_tree(src, dst, limits)
    assert len(os.listdir(ws / "copy")) <= 3


def test_a_copy_goes_no_deeper_than_its_depth(ws: Path) -> None:
    """A chain of folders nested past Python's stack ended a copy in 'maximum recursion depth exceeded'."""
    fd = os.open(ws / "notes", os.O_RDONLY)
    for _ in range(wf.COPY_DEPTH + 1):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    (ws / "copy").mkdir()
    with wf.opened_dir(ws, "notes") as src, wf.opened_dir(ws, "copy") as dst:
        with pytest.raises(wf.TooLarge, match=f"its folders are nested more than {wf.COPY_DEPTH} deep"):
            wf.copy_tree(src, dst)

"""What the "Made in this chat" column is given, from real files in a workspace: a long text is cut and says so,
a link out of the workspace is never read through, a link inside is previewed but not opened, and a file a
later turn deleted is no longer listed."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from desktop.checkpoints.journal import Change, TurnChanges
from desktop.checkpoints.made import folder_of, made_files, read_preview
from desktop.workspace.opening import open_refusal
from tests.crowd import empty_files


def test_previews_are_capped_and_never_follow_a_link_out(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.md").write_text("SECRET\n")
    (ws / "long.txt").write_text("x" * 300 * 1024)
    (ws / "escape.md").symlink_to(outside / "secret.md")
    (ws / "inside.md").symlink_to("long.txt")
    (ws / "out").symlink_to(outside)

    long = read_preview(ws, "long.txt")
    assert long.kind == "text" and len(long.text) == 256 * 1024
    assert long.note == "The first 256 KB of 300 KB are shown." and long.runs == ""

    escape = read_preview(ws, "escape.md")
    assert escape.kind == "none" and not escape.readable and "SECRET" not in escape.text
    assert escape.note.startswith("Not shown:") and open_refusal(ws, "escape.md")
    inside = read_preview(ws, "inside.md")
    assert inside.readable and inside.runs == "it is a link, and what it leads to is not what was looked at"
    assert folder_of(ws, "out/secret.md") is None and folder_of(ws, "long.txt") == ws


def test_a_file_a_later_turn_deleted_or_an_undone_turn_made_is_not_listed() -> None:
    file = ("0" * 64, 0o644)

    def turn(n: int, *changes: Change, undone: bool = False) -> TurnChanges:
        return TurnChanges(str(n), "c", "/ws", n, f"turn {n}", f"2026-01-0{n}", list(changes), undone)

    turns = [turn(1, Change("a.md", None, file), Change("b.md", None, file)),
             turn(2, Change("a.md", file, None)),
             turn(3, Change("c.md", None, file), undone=True),
             turn(4, Change("b.md", file, ("1" * 64, 0o644)))]
    assert [(m.path, m.verb, m.label) for m in made_files(turns)] == [("b.md", "modified", "turn 4")]


def test_telling_whether_a_file_is_a_link_does_not_list_its_whole_folder(tmp_path: Path) -> None:
    """Open (and each preview) asked whether the file is a link by listing its folder whole: a folder of
    millions of names (a loop in one sandboxed command) sat in the app's memory each time. Here 20,000."""
    crowd = tmp_path / "ws" / "crowd"
    crowd.mkdir(parents=True)
    empty_files(crowd, (f"n{i:06}.md" for i in range(20_000)))
    (crowd / "link.md").symlink_to("n000001.md")
    tracemalloc.start()
    try:
        assert open_refusal(tmp_path / "ws", "crowd/n000000.md") == ""
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20, f"{peak / 2**20:.0f} MB held"
    assert open_refusal(tmp_path / "ws", "crowd/link.md") == "it is a link, and what it leads to is not what was looked at"

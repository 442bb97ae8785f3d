"""A window's unsent message kept in the data folder: written whole, read back, gone when the box is empty."""

from __future__ import annotations

from pathlib import Path

from desktop.conversation.drafts import draft_path, load_draft, save_draft


def test_a_draft_is_kept_whole_and_a_blank_box_keeps_none(tmp_path: Path) -> None:
    path = draft_path(tmp_path / "state", "chat")
    assert load_draft(path) == ""
    text = "Dear Sam,\n\n  the figures for Q3 ✓ \udcff\n"
    save_draft(path, text)
    assert load_draft(path) == text.replace("\udcff", "\ufffd")  # a stray escape is mended, not a failed save
    save_draft(path, "  \n")
    assert not path.exists() and load_draft(path) == ""


def test_an_unreadable_draft_starts_the_box_empty(tmp_path: Path) -> None:
    path = draft_path(tmp_path, "quick")
    path.mkdir()  # not a file: reading it fails
    assert load_draft(path) == ""

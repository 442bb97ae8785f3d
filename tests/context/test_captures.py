"""Screenshots are kept in the app's data folder, whole, each under its own name."""

from __future__ import annotations

from pathlib import Path

from desktop.context.captures import FOLDER, keep_capture


def test_each_capture_is_a_new_file_in_the_data_folder_with_nothing_left_half_written(tmp_path: Path) -> None:
    first = keep_capture(tmp_path, b"\x89PNG one")
    second = keep_capture(tmp_path, b"\x89PNG two")
    assert first != second and first.parent == second.parent == tmp_path / FOLDER
    assert first.read_bytes() == b"\x89PNG one" and second.read_bytes() == b"\x89PNG two"
    assert first.suffix == ".png"
    assert sorted(p.name for p in (tmp_path / FOLDER).iterdir()) == sorted([first.name, second.name])

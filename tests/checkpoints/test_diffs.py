"""What the changes strip says of one file, from a real checkpoint store: a diff too long to read is cut with
a count, a file too large to diff or to keep says so with its sizes, a link says where it points."""

from __future__ import annotations

import os
from pathlib import Path

from desktop.checkpoints.blobs import Blobs
from desktop.checkpoints.diffs import DIFF_LINES, file_diff
from desktop.checkpoints.journal import Change


def kept(blobs: Blobs, folder: Path, data: bytes) -> tuple[str, int]:
    (folder / "f").write_bytes(data)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        found = blobs.keep(fd, "f")
    finally:
        os.close(fd)
    assert found is not None
    return found[0], 0o644


def test_long_large_and_linked_files(tmp_path: Path) -> None:
    blobs = Blobs(tmp_path / "store", limit=4 * 1024 * 1024)
    many = kept(blobs, tmp_path, "".join(f"line {n}\n" for n in range(3000)).encode())
    shown = file_diff(blobs, Change("list.txt", None, many)).text.splitlines()
    assert len(shown) == DIFF_LINES + 1 and shown[-1] == "… 1,003 more lines of the diff not shown"
    assert shown[:3] == ["--- /dev/null", "+++ b/list.txt", "@@ -0,0 +1,3000 @@"]

    big = kept(blobs, tmp_path, b"x\n" * 600_000)
    assert file_diff(blobs, Change("big.txt", many, big)).summary == "large file, 28 KB → 1.1 MB"
    huge = (f"large:{80 * 2**20}:1:1", 0o644)
    assert file_diff(blobs, Change("video.mp4", None, huge)).summary == "large file (not kept), 80.0 MB"
    link = ("link:../elsewhere", 0o777)
    assert file_diff(blobs, Change("notes", many, link)).summary == "a file → a link to ../elsewhere"

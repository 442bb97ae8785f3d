"""A folder of very many empty files, as one loop in a sandboxed command makes in moments: the attack behind the
tests that the app's own process never holds a whole folder's names. Made by descriptor, tens of thousands a
second (a Path per name would take several times longer)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def empty_files(folder: Path, names: Iterable[str]) -> None:
    """Create each of `names` as an empty file in `folder` (which must exist)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        for name in names:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)

"""A file or folder nothing can write to, for the tests of what the app does when a write fails."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """`path` read-only for the block: a folder nothing can be made in, a file nothing can be written to (a backup
    tool's lock, a folder the person made read-only). Root is not stopped by the mode bits, so as root it is made
    immutable too (chattr +i, which stops root as well); where even that is not allowed, the test is skipped."""
    folder = path.is_dir()
    path.chmod(0o555 if folder else 0o444)
    immutable = os.geteuid() == 0
    try:
        if immutable and subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("running as root where chattr +i is not allowed: nothing can be made read-only")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], capture_output=True)
        path.chmod(0o755 if folder else 0o644)

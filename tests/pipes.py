"""A named pipe that says whether anything opened it to read, and never leaves that reader waiting.

What the app reads where a picture or a file is named by words a sandboxed command or the model chose must not be
a pipe outside the workspace: an open of one for reading waits for a writer, forever, and on the GUI thread the app
freezes. A test cannot wait forever to see that; this pipe's watcher opens it for writing whenever a reader is
there (which a non-blocking open tells) and closes it at once, so the reader gets an empty file and goes on, and
the test learns that a read was tried."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def watched_pipe(path: Path) -> Iterator[list[str]]:
    """Make the pipe `path`; yields a list that gets an entry each time something opened it to read."""
    os.mkfifo(path)
    opened: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno != errno.ENXIO:  # ENXIO: no reader
                    raise
                stop.wait(0.005)
                continue
            opened.append(str(path))
            os.close(fd)  # the reader reads the end of an empty file
            stop.wait(0.05)

    watcher = threading.Thread(target=watch, name=f"pipe {path.name}", daemon=True)
    watcher.start()
    try:
        yield opened
    finally:
        stop.set()
        watcher.join(5)

"""A named pipe that says whether anything opened it to read, and never leaves that reader waiting.

What the app reads where a picture or a file is named by words a sandboxed command or the model chose must not be
a pipe outside the workspace: an open of one for reading waits for a writer, forever, and on the GUI thread the app
freezes. A test cannot wait forever to see that; this pipe's watcher opens it for writing whenever a reader is
there (which a non-blocking open tells) and closes it at once, so the reader gets an empty file and goes on, and
the test learns that a read was tried. The watcher is a process of its own: a reader stuck on the GUI thread may
hold the interpreter's lock, and a thread could not run to free it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_WATCH = """
import errno, os, sys, time
pipe, log = sys.argv[1], sys.argv[2]
os.mkfifo(pipe)
open(log + ".ready", "w").close()
while True:
    try:
        fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: no reader
            raise
        time.sleep(0.005)
        continue
    with open(log, "a") as out:
        out.write("opened\\n")
    os.close(fd)  # the reader reads the end of an empty file

"""


@contextmanager
def watched_pipe(path: Path) -> Iterator[list[str]]:
    """Make the pipe `path`; yields a list that, once the block ends, holds an entry for each time something
    opened it to read."""
    log = path.with_name(path.name + ".opened")
    watcher = subprocess.Popen([sys.executable, "-c", _WATCH, str(path), str(log)])
    opened: list[str] = []
    try:
        for _ in range(1000):  # the pipe made, at most 10 s
            if log.with_name(log.name + ".ready").exists() or watcher.poll() is not None:
                break
            time.sleep(0.01)
        assert path.exists(), "the pipe's watcher did not start"
        yield opened
    finally:
        watcher.kill()
        watcher.wait(5)
        if log.exists():
            opened.extend(log.read_text().split())

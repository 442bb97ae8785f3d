"""The scripted model server as its own process on a local model server's usual port, where first start
looks for one (see desktop/providers/discovery.py).

Those ports are the same for every test run on the machine, so a run holds a lock file while it uses them:
two runs at once take turns instead of each app finding the other run's server. A model server that is not
ours (a developer's LM Studio, say) would be listed by first start too: then the test skips."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.providers.discovery import probe_local_servers
from tests.e2e.xdesktop import DIE_WITH_US, REPO, read_line

LOCAL_PORTS = (1234, 8080)  # LM Studio's and llama.cpp's
LOCK = Path(tempfile.gettempdir()) / "nanobot-tray-tests-local-model-ports.lock"
LOCK_WAIT = 300  # seconds: another run's first-start tests hold the ports for a minute or two


class LocalServer:
    """The scripted server as its own process on a local server's usual port, so stopping it closes every
    connection as a model server that quits does (it answers "echo: <question>")."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.proc = subprocess.Popen([*DIE_WITH_US, sys.executable, str(REPO / "tests" / "fakeserver.py"),
                                      "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdout is not None
        try:
            said = read_line(self.proc.stdout.fileno(), 30, f"the scripted server on port {port}")
        except AssertionError:
            if self.proc.poll() is None and not _exits(self.proc):  # alive but silent: not a taken port
                self.stop()
                raise
            said = ""  # it exited: the port is taken
        self.listening = said.startswith("LISTENING")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def local_server() -> Iterator[LocalServer]:
    """For a fixture: the server on the first free port of LOCAL_PORTS, the only local model server running
    (skips when another one answers, or both ports are taken)."""
    with _ports_held():
        running = asyncio.run(probe_local_servers())
        if running:
            pytest.skip(f"a model server runs at {running[0].root}: first start would list it beside the scripted one")
        for port in LOCAL_PORTS:
            server = LocalServer(port)
            try:
                if server.listening:
                    yield server
                    return
            finally:
                server.stop()
        pytest.skip(f"ports {LOCAL_PORTS} are taken: first start would not find the scripted server there")


def _exits(proc: subprocess.Popen[bytes]) -> bool:
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        return False
    return True


@contextlib.contextmanager
def _ports_held() -> Iterator[None]:
    """The machine-wide lock on the local model ports, waited for at most LOCK_WAIT seconds. The kernel drops it
    when the holding process dies, so a killed run never leaves it taken."""
    fd = os.open(LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"another test run held {LOCK} for {LOCK_WAIT} s") from None
                time.sleep(0.5)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock

"""The scripted model server as its own process on a local model server's usual port, where first start
looks for one (see desktop/providers/discovery.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.e2e.xdesktop import REPO

LOCAL_PORTS = (1234, 8080)  # LM Studio's and llama.cpp's


class LocalServer:
    """The scripted server as its own process on a local server's usual port, so stopping it closes every
    connection as a model server that quits does (it answers "echo: <question>")."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fakeserver.py"), "--port", str(port)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        self.listening = self.proc.stdout.readline().startswith("LISTENING")  # empty if the port is taken

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(10)


def local_server() -> Iterator[LocalServer]:
    """For a fixture: the server on the first free port of LOCAL_PORTS (skips when both are taken)."""
    for port in LOCAL_PORTS:
        server = LocalServer(port)
        try:
            if server.listening:
                yield server
                return
        finally:
            server.stop()
    pytest.skip(f"ports {LOCAL_PORTS} are taken: first start would not find the scripted server there")

"""MCP fixtures: our test server as a stdio command or on a loopback port (streamable HTTP or SSE), fast
restarts and pings."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.mcp.connection import Backoff

SERVER = str(Path(__file__).with_name("server.py"))
FAST = Backoff(first=0.05, longest=0.2)


def stdio_server(**extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER], "timeout": 5, **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.mcp.connection.BACKOFF", FAST)
    monkeypatch.setattr("desktop.mcp.connection.PING_EVERY", 0.2)


class RemoteServer:
    """Our server as its own process on a loopback port, for `--http` (streamable HTTP at /mcp) or `--sse`
    (at /sse, or `path`); it can be killed and started again on the same port, as a service restarts."""

    def __init__(self, mode: str, path: str | None = None) -> None:
        self.mode = mode
        self.port = free_port()
        self.path = path or ("/mcp" if mode == "--http" else "/sse")
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def start(self) -> RemoteServer:
        extra = ["--path", self.path] if self.path not in ("/mcp", "/sse") else []
        self.proc = subprocess.Popen([sys.executable, SERVER, self.mode, str(self.port), *extra],
                                     stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"the test server did not listen on {self.port}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(10)

    def config(self, **extra: Any) -> dict[str, Any]:
        return {"url": self.url, "timeout": 5, **extra}


@pytest.fixture
def remote_servers() -> Iterator[Callable[..., RemoteServer]]:
    """Starts remote test servers on demand; all stopped at the end."""
    made: list[RemoteServer] = []

    def start(mode: str = "--http", path: str | None = None) -> RemoteServer:
        made.append(RemoteServer(mode, path).start())
        return made[-1]

    yield start
    for server in made:
        server.stop()


@pytest.fixture
def http_server(remote_servers: Callable[..., RemoteServer]) -> str:
    """Our server on streamable HTTP at 127.0.0.1; its URL."""
    return remote_servers("--http").url

"""MCP fixtures: our test server as a stdio command or on a loopback port (streamable HTTP or SSE), fast
restarts and pings."""

from __future__ import annotations

import contextlib
import os
import select
import signal
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
    """The product's default timeout, which also bounds the connect: a fresh Python importing the MCP SDK took
    over 5 s on a loaded machine, and a connect cut short starts the server again, which tests count."""
    return {"command": sys.executable, "args": [SERVER], "timeout": 30, **extra}


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.mcp.connection.BACKOFF", FAST)
    monkeypatch.setattr("desktop.mcp.connection.PING_EVERY", 0.2)


class RemoteServer:
    """Our server as its own process on a loopback port, for `--http` (streamable HTTP at /mcp) or `--sse`
    (at /sse, or `path`). The first start takes a port the system chooses; it can be killed and started
    again on that port, as a service restarts. It runs in a process group of its own, killed whole, and dies
    with this process even when that is killed outright."""

    def __init__(self, mode: str, path: str | None = None, extra: tuple[str, ...] = ()) -> None:
        self.mode = mode
        self.port = 0
        self.path = path or ("/mcp" if mode == "--http" else "/sse")
        self.extra = extra  # more of the server's arguments (--oauth SECONDS)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def start(self) -> RemoteServer:
        extra = ["--path", self.path] if self.path not in ("/mcp", "/sse") else []
        extra += self.extra
        self.proc = subprocess.Popen([sys.executable, SERVER, self.mode, str(self.port), *extra],
                                     stdout=subprocess.PIPE, start_new_session=True,
                                     env={**os.environ, "TESTSERVER_PARENT": str(os.getpid())})
        try:
            self.port = int(_listening_line(self.proc, 30).removeprefix("LISTENING port="))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()

    def config(self, **extra: Any) -> dict[str, Any]:
        return {"url": self.url, "timeout": 5, **extra}


def _listening_line(proc: subprocess.Popen[bytes], seconds: float) -> str:
    """The server's "LISTENING port=N" line, waited for at most `seconds`."""
    assert proc.stdout is not None
    deadline, got = time.monotonic() + seconds, b""
    while not got.endswith(b"\n"):
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(proc.stdout.fileno(), 256) if ready else b""
        if not chunk:
            why = "exited" if ready else f"said nothing for {seconds:g} s"
            raise RuntimeError(f"the test server {why} instead of listening (its errors are in the captured stderr)")
        got += chunk
    line = got.decode().strip()
    if not line.startswith("LISTENING port="):
        raise RuntimeError(f"the test server said {line!r} instead of LISTENING port=N")
    return line


@pytest.fixture
def remote_servers() -> Iterator[Callable[..., RemoteServer]]:
    """Starts remote test servers on demand; all stopped at the end."""
    made: list[RemoteServer] = []

    def start(mode: str = "--http", path: str | None = None, *extra: str) -> RemoteServer:
        made.append(RemoteServer(mode, path, extra).start())
        return made[-1]

    yield start
    for server in made:
        server.stop()


@pytest.fixture(params=["stdio", "http"])
def served(request: pytest.FixtureRequest,
           remote_servers: Callable[..., RemoteServer]) -> Callable[..., tuple[dict[str, Any], RemoteServer | None]]:
    """Our test server's config over each transport (and, when remote, its process)."""
    def serve(**extra: Any) -> tuple[dict[str, Any], RemoteServer | None]:
        if request.param == "stdio":
            return stdio_server(**extra), None
        remote = remote_servers("--http")
        return remote.config(**extra), remote
    return serve


@pytest.fixture
def http_server(remote_servers: Callable[..., RemoteServer]) -> str:
    """Our server on streamable HTTP at 127.0.0.1; its URL."""
    return remote_servers("--http").url

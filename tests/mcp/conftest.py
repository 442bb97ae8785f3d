"""MCP fixtures: our test server as a stdio command or on a loopback HTTP port, fast restarts."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
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


@pytest.fixture
def http_server() -> Iterator[str]:
    """Our server on streamable HTTP at 127.0.0.1; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, SERVER, "--http", str(port)], stderr=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/mcp"
    proc.terminate()
    proc.wait(10)

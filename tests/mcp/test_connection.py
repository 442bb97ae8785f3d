"""Closing the core (the app's Quit) never waits on an MCP server, whatever the server does: a URL that accepts
the connection and never answers, a server that stops answering after the handshake, a stdio server that
ignores stdin closing and SIGTERM. Real sockets and processes, each started by the test on a free port."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core import Core
from desktop.mcp import McpServers
from desktop.tools.base import ToolContext
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import RemoteServer, stdio_server
from tests.mcp.test_tools import started, until
from tests.memkeyring import MemoryKeyring

CLOSE_BOUND = 10.0  # what the app's Quit may take at most; a stuck server used to hold it forever
CALLER = ToolContext("cli:test")

# A stdio "server" that never answers and cannot be stopped politely: it does not read stdin (so closing it
# says nothing) and ignores SIGTERM, SIGINT and SIGHUP. It writes its pid where it is told.
STUBBORN = """
import os, signal, sys, time
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, signal.SIG_IGN)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(60)
"""

# The app's Quit in short: start the core, wait for the server process, close the core (bounded, or exit 3)
# and end the process at once.
QUIT_AFTER_START = """
import asyncio, os, sys
from desktop.core import build_core

async def main():
    core = build_core()
    await core.start()
    while not os.path.exists(sys.argv[1]):
        await asyncio.sleep(0.05)
    try:
        await asyncio.wait_for(core.close(), float(sys.argv[2]))
    except TimeoutError:
        os._exit(3)
    os._exit(0)

asyncio.run(main())
"""


class Silent:
    """A TCP server on 127.0.0.1 that accepts connections and never says a word."""

    def __init__(self) -> None:
        self.accepted: list[asyncio.StreamWriter] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def _hold(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted.append(writer)

    async def __aenter__(self) -> Silent:
        self._server = await asyncio.start_server(self._hold, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self.accepted:
            writer.close()


@pytest.fixture
async def silent() -> AsyncIterator[Silent]:
    async with Silent() as server:
        yield server


def running(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def closed_in_bound(core: Core) -> None:
    await asyncio.wait_for(core.close(), CLOSE_BOUND)


async def pid_of(core: Core, server: str) -> int:
    outcome = await core.tools.run(f"mcp_{server}_pid", {}, CALLER)
    assert outcome.ok, outcome.output
    return int(str(outcome.output).rsplit("\n", 1)[-1])


@pytest.mark.parametrize("path", ["/mcp", "/sse"])
async def test_a_url_that_accepts_and_never_answers_fails_in_its_time_and_quit_does_not_wait_on_it(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        silent: Silent, path: str) -> None:
    """Streamable HTTP waits for its first answer, SSE for the stream's first event: neither comes. Each
    connect gives up after the server's timeout (at least 5 s) and says so; Quit meanwhile does not wait."""
    url = f"http://127.0.0.1:{silent.port}{path}"
    core = await started(home_dir, model_config, {"mute": {"url": url, "timeout": 1}})
    try:
        server = core.get(McpServers).servers["mute"]
        await until(lambda: server.state == "failed", 30)
        assert server.error == f"no answer from {url} within 5 s"
        await until(lambda: server.state == "connecting")  # tried again, and held again
    finally:
        await closed_in_bound(core)


@pytest.mark.parametrize("mode", ["stdio", "--sse", "--http"])
async def test_quit_does_not_wait_on_a_server_that_stops_answering_mid_call(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        remote_servers: Callable[..., RemoteServer], mode: str) -> None:
    """The server answers the handshake, then freezes (SIGSTOP: its streams go silent, it neither reads nor
    exits on SIGTERM) with a call in flight; the call ends with the core and a stdio server is gone."""
    remote = None if mode == "stdio" else remote_servers(mode)
    config = stdio_server(timeout=600) if remote is None else remote.config(timeout=600)
    core = await started(home_dir, model_config, {"test": config})
    call: asyncio.Future[Any] | None = None
    try:
        await until(lambda: core.get(McpServers).servers["test"].state == "connected")
        pid = await pid_of(core, "test") if remote is None else remote.proc.pid  # type: ignore[union-attr]
        os.kill(pid, signal.SIGSTOP)
        call = asyncio.ensure_future(core.tools.run("mcp_test_echo", {"text": "anyone?"}, CALLER))
        done, _ = await asyncio.wait([call], timeout=0.5)
        assert not done  # nobody answers it
    finally:
        await closed_in_bound(core)
    assert call is not None
    outcome = await asyncio.wait_for(call, CLOSE_BOUND)
    assert not outcome.ok
    if remote is None:
        await until(lambda: not running(pid), CLOSE_BOUND)


def test_quit_leaves_no_stdio_server_behind_even_one_that_ignores_sigterm_and_never_answers(
        home_dir: Path, model_config: dict[str, Any], tmp_path: Path) -> None:
    """As the app quits: the core closes and the process ends at once, so nothing left running in the background
    gets another turn. The server must be gone all the same (before, stdin closing and SIGTERM were all it got)."""
    pid_file = tmp_path / "stubborn.pid"
    write_config(home_dir, **model_config, mcp={"servers": {"stubborn": {
        "command": sys.executable, "args": ["-c", STUBBORN, str(pid_file)], "timeout": 30, "trusted": True}}})
    env = {**os.environ, "NANOBOT_TRAY_HOME": str(home_dir), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    quit_app = subprocess.run([sys.executable, "-c", QUIT_AFTER_START, str(pid_file), str(CLOSE_BOUND)],
                              env=env, capture_output=True, text=True, timeout=120)
    assert quit_app.returncode == 0, quit_app.stderr
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + CLOSE_BOUND
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = running(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "the MCP server outlived the app"


async def test_a_feature_stuck_closing_neither_holds_quit_nor_keeps_servers_running(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        caplog: pytest.LogCaptureFixture) -> None:
    """Closers run last attached first: the stuck one goes before the MCP servers', which still stop theirs."""
    core = await started(home_dir, model_config, {"test": stdio_server()})

    async def never_done() -> None:
        await asyncio.Event().wait()

    core.on_close(never_done)
    try:
        await until(lambda: core.get(McpServers).servers["test"].state == "connected")
        pid = await pid_of(core, "test")
    finally:
        await closed_in_bound(core)
    assert "never_done took over 5 s; left behind" in caplog.text
    await until(lambda: not running(pid), CLOSE_BOUND)


# A stdio server whose tool list never ends: every page names a next one.
ENDLESS_TOOLS = """
import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

async def pages(ctx, params):
    page = int((params.cursor if params else None) or 0)
    tool = types.Tool(name=f"t{page}", input_schema={"type": "object"})
    return types.ListToolsResult(tools=[tool], next_cursor=str(page + 1))

server = Server("endless", on_list_tools=pages)

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


async def test_a_tool_list_that_never_ends_fails_the_server_instead_of_holding_it(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("desktop.mcp.connection.MAX_TOOL_PAGES", 20)
    core = await started(home_dir, model_config, {"endless": {"command": sys.executable, "args": ["-c", ENDLESS_TOOLS],
                                                              "timeout": 10}})
    try:
        server = core.get(McpServers).servers["endless"]
        await until(lambda: server.state == "failed" and "pages of tools" in (server.error or ""))
        assert "more than 20 pages of tools" in (server.error or "")
        assert not [t for t in core.tools.names if t.startswith("mcp_endless_")]
    finally:
        await closed_in_bound(core)


async def test_a_server_refused_for_running_from_the_workspace_waits_for_a_person_instead_of_retrying(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring) -> None:
    """A failed server is tried again with backoff; one refused because it would run a file the workspace holds
    meets the same file at every try. It stays refused, saying why, until a person reconnects it (or edits it)."""
    planted = home_dir / "workspace" / "server.sh"  # the tests' workspace
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    planted.chmod(0o755)
    core = await started(home_dir, model_config, {"planted": {"command": str(planted)}})
    servers = core.get(McpServers)
    states: list[str] = []
    core.bus.subscribe(lambda event: states.append(event.state) if getattr(event, "name", None) == "planted" else None)
    try:
        server = servers.servers["planted"]
        await until(lambda: server.state == "refused", 30)
        assert "in the workspace" in (server.error or "")
        assert servers.states()["planted"] == f"refused: {server.error}"
        states.clear()  # from here on: the events it may have sent before this test listened are not counted
        await asyncio.sleep(1.0)  # twenty of the tests' shortest waits between retries
        assert server.state == "refused" and states == [], states  # never tried again on its own
        await servers.reconnect("planted")
        await until(lambda: servers.servers["planted"].state == "refused", 30)
        assert states.count("connecting") == 1 and states[-1] == "refused", states  # tried when asked, refused
    finally:
        await closed_in_bound(core)

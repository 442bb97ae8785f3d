"""A configured stdio program that never speaks MCP (a wrong command: `yes`, a shell, a tool printing its help)
fails at once, saying what it printed and that it does not look like an MCP server; one that prints a line or
two before it speaks MCP (a banner, a library's notice) still connects. Real processes."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.mcp import McpServers
from desktop.mcp.connection import QUOTED
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import SERVER, stdio_server
from tests.mcp.test_tools import started, until
from tests.memkeyring import MemoryKeyring

# Two lines on stdout before the real server starts on the same stdout (as `python -m` tools with a banner do).
BANNER = """
import os, sys
print("Demo MCP server 1.0 starting")
print("dotenv: injecting env (0) from .env")
sys.stdout.flush()
os.execv(sys.executable, [sys.executable, sys.argv[1]])
"""


# A program printing its usage forever, in bold (a terminal's escape) and longer than the message quotes.
USAGE = "while True: print('\\x1b[1mUsage: ' + 'x' * 200)"
# A program logging JSON lines (pino, structlog): JSON, but not JSON-RPC.
JSON_LOG = "while True: print('{\"level\":30,\"msg\":\"listening\"}')"


@pytest.mark.parametrize(("command", "args", "quoted"), [
    ("yes", ["garbage"], "“garbage”"),
    (sys.executable, ["-c", USAGE], "“[1mUsage: " + "x" * (QUOTED - len("[1mUsage: ")) + "…”"),
    (sys.executable, ["-c", JSON_LOG], '“{"level":30,"msg":"listening"}”')], ids=["yes", "usage", "json-log"])
async def test_a_program_that_prints_only_other_lines_fails_at_once_saying_it_is_not_an_mcp_server(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        command: str, args: list[str], quoted: str) -> None:
    """`yes garbage` prints "garbage" forever: it failed only when the 30 s start timeout ran out, saying
    "no answer within 30 s", which did not say why. Its first line is quoted as plain text, cut short."""
    core = await started(home_dir, model_config, {"wrong": {"command": command, "args": args, "timeout": 30}})
    try:
        server = core.get(McpServers).servers["wrong"]
        began = asyncio.get_running_loop().time()
        await until(lambda: server.state == "failed", timeout=20)
        assert asyncio.get_running_loop().time() - began < 10
        error = server.error or ""
        assert "does not look like an MCP server" in error and quoted in error, error
        assert "within 30 s" not in error, error
    finally:
        await asyncio.wait_for(core.close(), 10)


async def test_a_server_that_prints_a_banner_before_speaking_mcp_still_connects(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        caplog: pytest.LogCaptureFixture) -> None:
    """It connects, and its log says once what it printed that is no message (the SDK's traceback for each such
    line is left out of the log)."""
    caplog.set_level(logging.WARNING)
    core = await started(home_dir, model_config, {"chatty": stdio_server(args=["-c", BANNER, SERVER])})
    try:
        server = core.get(McpServers).servers["chatty"]
        await until(lambda: server.state != "connecting")
        assert server.state == "connected", server.describe()
        assert any(name.startswith("mcp_chatty_") for name in core.tools.names)
        said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "chatty" in r.getMessage()]
        assert said == ["MCP server chatty sent what is not an MCP message (logged once per connection; the rest "
                        "with -v): Demo MCP server 1.0 starting"], said
    finally:
        await asyncio.wait_for(core.close(), 10)

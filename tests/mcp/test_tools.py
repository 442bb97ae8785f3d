"""MCP servers' tools through real agent turns: the scripted model calls them, real servers answer."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop.bus import TurnFinished
from desktop.core import Core, build_core
from desktop.tools.base import ToolContext
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import stdio_server
from tests.memkeyring import MemoryKeyring


async def until(check: Any, timeout: float = 20.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.02)


async def started(home_dir: Path, model_config: dict[str, Any], servers: dict[str, Any]) -> Core:
    """A core with these servers, trusted (their tools run without asking: approvals are tested elsewhere)."""
    servers = {name: {"trusted": True, **server} for name, server in servers.items()}
    write_config(home_dir, **model_config, mcp={"servers": servers})
    core = build_core()
    await core.start()
    return core


@pytest.fixture
async def mcp_core(home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring) -> AsyncIterator[Core]:
    core = await started(home_dir, model_config, {"test": stdio_server(),
                                                   "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
                                                   "broken": {"command": "/nonexistent/mcp-server"}})
    yield core
    await core.close()


def tool_results(fake: FakeOpenAI) -> list[str]:
    last = fake.requests[-1]["messages"]
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in last if m["role"] == "tool"]


async def turn(core: Core, fake: FakeOpenAI, tool: str, args: dict[str, Any]) -> str:
    fake.add({"tool_calls": [{"name": tool, "arguments": args}]}, {"content": "done"})
    end = await Conversation(core).ask("go")
    assert isinstance(end, TurnFinished)
    return tool_results(fake)[-1]


async def test_tools_of_connected_servers_are_offered_and_called(mcp_core: Core, fake: FakeOpenAI) -> None:
    await until(lambda: mcp_core.mcp.servers["test"].state == "connected" and mcp_core.mcp.servers["time"].state == "connected")
    await until(lambda: mcp_core.mcp.servers["broken"].state == "failed")
    assert "command not found" in mcp_core.mcp.states()["broken"]
    offered = {t["function"]["name"] for t in mcp_core.tools.schemas()}
    assert {"mcp_test_echo", "mcp_time_get_current_time", "read_file"} <= offered
    assert await turn(mcp_core, fake, "mcp_test_echo", {"text": "hi", "times": 2}) == "hi hi"
    sent = {t["function"]["name"]: t["function"] for t in fake.requests[-1]["tools"]}
    assert sent["mcp_test_echo"]["parameters"]["properties"]["times"]["type"] == ["integer", "null"]
    assert '"timezone": "UTC"' in await turn(mcp_core, fake, "mcp_time_get_current_time", {"timezone": "UTC"})


async def test_error_results_images_and_structured_content(mcp_core: Core, fake: FakeOpenAI) -> None:
    await until(lambda: mcp_core.mcp.servers["test"].state == "connected")
    failed = await turn(mcp_core, fake, "mcp_test_fail", {"reason": "no way"})
    assert failed.startswith("Error: ") and "refused: no way" in failed
    picture = (await mcp_core.tools.run("mcp_test_picture", {}, ToolContext("cli:test", "cli", "test"))).output
    assert picture[0] == {"type": "text", "text": "a red dot"}  # the same parts read_file gives for an image
    assert picture[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    weather = await turn(mcp_core, fake, "mcp_test_weather", {"city": "Oslo"})
    assert json.loads(weather) == {"city": "Oslo", "celsius": 21}


async def test_a_call_past_its_timeout_is_cancelled_and_reported(home_dir: Path, model_config: dict[str, Any],
                                                                 memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    core = await started(home_dir, model_config, {"test": stdio_server(timeout=0.3)})
    try:
        await until(lambda: core.mcp.servers["test"].state == "connected")
        result = await turn(core, fake, "mcp_test_slow", {"seconds": 30})
        assert "MCP server 'test': slow did not finish within 0.3 s and was cancelled" in result
        assert await turn(core, fake, "mcp_test_echo", {"text": "still here"}) == "still here"
    finally:
        await core.close()


async def test_a_server_killed_mid_call_is_reported_restarted_and_works_again(mcp_core: Core, fake: FakeOpenAI) -> None:
    server = mcp_core.mcp.servers["test"]
    await until(lambda: server.state == "connected")
    result = await turn(mcp_core, fake, "mcp_test_crash", {})
    assert "MCP server 'test' stopped during the call to crash; it is being restarted" in result
    await until(lambda: server.state == "connected")
    assert await turn(mcp_core, fake, "mcp_test_echo", {"text": "back"}) == "back"
    log = mcp_core.mcp.log_file("test").read_text()
    assert "crashing on purpose" in log and log.count("testserver: started") == 2


async def test_a_changed_tool_list_is_picked_up_without_a_restart(mcp_core: Core, fake: FakeOpenAI) -> None:
    server = mcp_core.mcp.servers["test"]
    await until(lambda: server.state == "connected")
    assert "mcp_test_extra" not in mcp_core.tools.names
    assert await turn(mcp_core, fake, "mcp_test_grow", {}) == "grown"
    await until(lambda: "mcp_test_extra" in mcp_core.tools.names)
    assert await turn(mcp_core, fake, "mcp_test_extra", {}) == "extra here"
    assert mcp_core.mcp.log_file("test").read_text().count("testserver: started") == 1


async def test_a_down_server_is_not_offered_and_its_tools_say_why(home_dir: Path, model_config: dict[str, Any],
                                                                  memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    core = await started(home_dir, model_config, {"test": stdio_server()})
    try:
        server = core.mcp.servers["test"]
        await until(lambda: server.state == "connected")
        server.config.command = "/nonexistent/server"  # the restart after the crash fails from now on
        await turn(core, fake, "mcp_test_crash", {})
        await until(lambda: "command not found" in (server.error or ""))
        assert not [t for t in core.tools.schemas() if t["function"]["name"].startswith("mcp_test_")]
        result = await turn(core, fake, "mcp_test_echo", {"text": "x"})
        assert "MCP server 'test' is not connected (failed: command not found: /nonexistent/server)" in result
    finally:
        await core.close()


async def test_keyring_references_reach_the_server_but_no_file(home_dir: Path, model_config: dict[str, Any],
                                                               memory_keyring: MemoryKeyring, fake: FakeOpenAI,
                                                               http_server: str) -> None:
    import hashlib

    from desktop import secrets

    secret = "tok-4f9a-very-secret"
    secrets.set_key("mcp-token", secret)
    core = await started(home_dir, model_config, {
        "local": stdio_server(env={"API_TOKEN": "keyring:mcp-token"}),
        "remote": {"url": http_server, "headers": {"X-Token": "keyring:mcp-token"}, "timeout": 5}})
    try:
        await until(lambda: all(s.state == "connected" for s in core.mcp.servers.values()))
        digest = hashlib.sha256(secret.encode()).hexdigest()
        assert await turn(core, fake, "mcp_local_env_digest", {"name": "API_TOKEN"}) == digest
        assert await turn(core, fake, "mcp_remote_header_digest", {"name": "X-Token"}) == digest
    finally:
        await core.close()
    for path in home_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
    assert "keyring:mcp-token" in (home_dir / "config.yaml").read_text()


async def test_settings_changes_touch_only_the_servers_that_changed(home_dir: Path, model_config: dict[str, Any],
                                                                   memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    from desktop.config import McpServerConfig

    core = await started(home_dir, model_config, {"keep": stdio_server(), "change": stdio_server(), "drop": stdio_server()})
    try:
        await until(lambda: all(s.state == "connected" for s in core.mcp.servers.values()))
        kept, changed = core.mcp.servers["keep"], core.mcp.servers["change"]

        def edit(config: Any) -> None:
            servers = config.mcp.servers
            servers["change"].timeout = 7
            del servers["drop"]
            servers["new"] = McpServerConfig(**stdio_server(), trusted=True)

        await core.settings.update(edit)
        assert "mcp_drop_echo" not in core.tools.names
        await until(lambda: set(core.mcp.servers) == {"keep", "change", "new"}
                    and all(s.state == "connected" for s in core.mcp.servers.values()))
        assert core.mcp.servers["keep"] is kept and core.mcp.servers["change"] is not changed
        assert core.mcp.servers["change"].config.timeout == 7
        assert core.mcp.log_file("keep").read_text().count("testserver: started") == 1
        assert await turn(core, fake, "mcp_new_echo", {"text": "fresh"}) == "fresh"
        await core.settings.update(lambda config: setattr(config.mcp.servers["keep"], "enabled", False))
        assert core.mcp.states()["keep"] == "disabled" and "mcp_keep_echo" not in core.tools.names
    finally:
        await core.close()


async def test_closing_the_core_leaves_no_server_process(home_dir: Path, model_config: dict[str, Any],
                                                         memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    import os

    core = await started(home_dir, model_config, {"test": stdio_server()})
    await until(lambda: core.mcp.servers["test"].state == "connected")
    pid = int(await turn(core, fake, "mcp_test_pid", {}))
    await core.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)

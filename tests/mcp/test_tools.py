"""MCP servers' tools through real agent turns: the scripted model calls them, real servers answer over
stdio, streamable HTTP and SSE on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.core import Core, build_core
from desktop.kernel.bus import TurnFinished
from desktop.mcp import McpServers
from desktop.mcp.results import UNTRUSTED_NOTE
from desktop.mcp.settings import McpConfig
from desktop.tools.base import ToolContext
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import RemoteServer, stdio_server
from tests.memkeyring import MemoryKeyring


async def until(check: Any, timeout: float = 60.0) -> None:
    """Mostly a server connecting: a fresh Python importing the MCP SDK takes 10 s and more on a loaded machine."""
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


def unwrapped(result: str, server: str = "test") -> str:
    """A result as the server gave it, after checking it reached the model marked as untrusted."""
    note = UNTRUSTED_NOTE.format(server=server) + "\n\n"
    assert result.startswith(note), result
    return result[len(note):]


def tool_results(fake: FakeOpenAI) -> list[str]:
    last = fake.requests[-1]["messages"]
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"]) for m in last if m["role"] == "tool"]


async def turn(core: Core, fake: FakeOpenAI, tool: str, args: dict[str, Any]) -> str:
    fake.add({"tool_calls": [{"name": tool, "arguments": args}]}, {"content": "done"})
    end = await Conversation(core).ask("go")
    assert isinstance(end, TurnFinished)
    return tool_results(fake)[-1]


async def test_tools_of_connected_servers_are_offered_and_called(mcp_core: Core, fake: FakeOpenAI) -> None:
    await until(lambda: mcp_core.get(McpServers).servers["test"].state == "connected" and mcp_core.get(McpServers).servers["time"].state == "connected")
    await until(lambda: mcp_core.get(McpServers).servers["broken"].state == "failed")
    assert "command not found" in mcp_core.get(McpServers).states()["broken"]
    offered = {t["function"]["name"] for t in mcp_core.tools.schemas()}
    assert {"mcp_test_echo", "mcp_time_get_current_time", "read_file"} <= offered
    assert unwrapped(await turn(mcp_core, fake, "mcp_test_echo", {"text": "hi", "times": 2})) == "hi hi"
    sent = {t["function"]["name"]: t["function"] for t in fake.requests[-1]["tools"]}
    assert sent["mcp_test_echo"]["parameters"]["properties"]["times"]["type"] == ["integer", "null"]
    assert '"timezone": "UTC"' in await turn(mcp_core, fake, "mcp_time_get_current_time", {"timezone": "UTC"})


async def test_calls_error_results_images_and_structured_content(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        served: Callable[..., tuple[dict[str, Any], RemoteServer | None]]) -> None:
    core = await started(home_dir, model_config, {"test": served()[0]})
    try:
        await until(lambda: core.get(McpServers).servers["test"].state == "connected")
        assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "hi", "times": 2})) == "hi hi"
        failed = await turn(core, fake, "mcp_test_fail", {"reason": "no way"})
        assert failed.startswith("Error: ") and "refused: no way" in unwrapped(failed.removeprefix("Error: "))
        picture = (await core.tools.run("mcp_test_picture", {}, ToolContext("cli:test"))).output
        assert unwrapped(picture[0]["text"]) == "a red dot"  # the same parts read_file gives for an image
        assert picture[1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
        weather = await turn(core, fake, "mcp_test_weather", {"city": "Oslo"})
        assert json.loads(unwrapped(weather)) == {"city": "Oslo", "celsius": 21}
    finally:
        await core.close()


async def test_a_call_past_its_timeout_is_cancelled_and_reported(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        served: Callable[..., tuple[dict[str, Any], RemoteServer | None]]) -> None:
    core = await started(home_dir, model_config, {"test": served(timeout=0.3)[0]})
    try:
        await until(lambda: core.get(McpServers).servers["test"].state == "connected")
        result = await turn(core, fake, "mcp_test_slow", {"seconds": 30})
        assert "MCP server 'test': the call to slow did not finish within 0.3 s and was cancelled" in result
        assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "still here"})) == "still here"
    finally:
        await core.close()


async def test_a_server_killed_mid_call_is_reported_restarted_and_works_again(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        served: Callable[..., tuple[dict[str, Any], RemoteServer | None]]) -> None:
    """A stdio server is started again by us; a remote one comes back on its own (as a service restarts)
    and is reconnected."""
    config, remote = served()
    core = await started(home_dir, model_config, {"test": config})
    try:
        server = core.get(McpServers).servers["test"]
        await until(lambda: server.state == "connected")
        result = await turn(core, fake, "mcp_test_crash", {})
        assert "MCP server 'test' stopped during the call to crash; it is being restarted" in result
        if remote is not None:
            await until(lambda: server.state == "failed")
            remote.stop()
            remote.start()
        await until(lambda: server.state == "connected")
        assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "back"})) == "back"
        if remote is None:
            log = core.get(McpServers).places.log_file("test").read_text()
            assert "crashing on purpose" in log and log.count("testserver: started") == 2
    finally:
        await core.close()


@pytest.mark.parametrize("mode", ["--http", "--sse"])
async def test_a_remote_server_that_goes_away_while_idle_is_marked_down_and_reconnected(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        remote_servers: Callable[..., RemoteServer], mode: str) -> None:
    remote = remote_servers(mode)
    core = await started(home_dir, model_config, {"test": remote.config()})
    try:
        server = core.get(McpServers).servers["test"]
        await until(lambda: server.state == "connected")
        remote.stop()  # no call in flight: only a ping (HTTP) or the broken stream (SSE) can tell
        await until(lambda: server.state == "failed")
        assert "mcp_test_echo" not in {t["function"]["name"] for t in core.tools.schemas()}
        result = await turn(core, fake, "mcp_test_echo", {"text": "x"})
        assert "MCP server 'test' is not connected (" in result  # failed, or connecting again
        remote.start()
        await until(lambda: server.state == "connected")
        assert unwrapped(await turn(core, fake, "mcp_test_echo", {"text": "back"})) == "back"
    finally:
        await core.close()


async def test_a_url_ending_in_sse_connects_over_sse_and_transport_overrides_the_guess(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        remote_servers: Callable[..., RemoteServer]) -> None:
    at_sse, elsewhere = remote_servers("--sse"), remote_servers("--sse", "/events")
    core = await started(home_dir, model_config, {
        "guessed": at_sse.config(), "told": elsewhere.config(transport="sse"), "unknown": elsewhere.config()})
    try:
        servers = core.get(McpServers).servers
        await until(lambda: servers["guessed"].state == servers["told"].state == "connected")
        await until(lambda: servers["unknown"].state == "failed")  # /events without `transport`: streamable HTTP
        assert unwrapped(await turn(core, fake, "mcp_guessed_echo", {"text": "sse"}), "guessed") == "sse"
        assert unwrapped(await turn(core, fake, "mcp_told_echo", {"text": "told"}), "told") == "told"
    finally:
        await core.close()


async def test_a_changed_tool_list_is_picked_up_without_a_restart(mcp_core: Core, fake: FakeOpenAI) -> None:
    server = mcp_core.get(McpServers).servers["test"]
    await until(lambda: server.state == "connected")
    assert "mcp_test_extra" not in mcp_core.tools.names
    assert unwrapped(await turn(mcp_core, fake, "mcp_test_grow", {})) == "grown"
    await until(lambda: "mcp_test_extra" in mcp_core.tools.names)
    assert unwrapped(await turn(mcp_core, fake, "mcp_test_extra", {})) == "extra here"
    assert mcp_core.get(McpServers).places.log_file("test").read_text().count("testserver: started") == 1


async def test_a_down_server_is_not_offered_and_its_tools_say_why(home_dir: Path, model_config: dict[str, Any],
                                                                  memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    core = await started(home_dir, model_config, {"test": stdio_server()})
    try:
        server = core.get(McpServers).servers["test"]
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

    from desktop.kernel import secrets

    secret = "tok-4f9a-very-secret"
    secrets.set_key("mcp-token", secret)
    core = await started(home_dir, model_config, {
        "local": stdio_server(env={"API_TOKEN": "keyring:mcp-token"}),
        "remote": {"url": http_server, "headers": {"X-Token": "keyring:mcp-token"}, "timeout": 5}})
    try:
        await until(lambda: all(s.state == "connected" for s in core.get(McpServers).servers.values()))
        digest = hashlib.sha256(secret.encode()).hexdigest()
        assert unwrapped(await turn(core, fake, "mcp_local_env_digest", {"name": "API_TOKEN"}), "local") == digest
        assert unwrapped(await turn(core, fake, "mcp_remote_header_digest", {"name": "X-Token"}), "remote") == digest
    finally:
        await core.close()
    for path in home_dir.rglob("*"):
        if path.is_file():
            assert secret not in path.read_text(errors="replace"), path
    assert "keyring:mcp-token" in (home_dir / "config.yaml").read_text()


async def test_settings_changes_touch_only_the_servers_that_changed(home_dir: Path, model_config: dict[str, Any],
                                                                   memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    from desktop.mcp.settings import McpServerConfig

    core = await started(home_dir, model_config, {"keep": stdio_server(), "change": stdio_server(), "drop": stdio_server()})
    try:
        await until(lambda: all(s.state == "connected" for s in core.get(McpServers).servers.values()))
        kept, changed = core.get(McpServers).servers["keep"], core.get(McpServers).servers["change"]
        # a slow start may have taken more than one attempt (each within the 5 s timeout): count from here
        starts = core.get(McpServers).places.log_file("keep").read_text().count("testserver: started")

        def edit(config: Any) -> None:
            servers = config.section(McpConfig).servers
            servers["change"].timeout = 7
            del servers["drop"]
            servers["new"] = McpServerConfig(**stdio_server(), trusted=True)

        await core.settings.update(edit)
        assert "mcp_drop_echo" not in core.tools.names
        await until(lambda: set(core.get(McpServers).servers) == {"keep", "change", "new"}
                    and all(s.state == "connected" for s in core.get(McpServers).servers.values()))
        assert core.get(McpServers).servers["keep"] is kept and core.get(McpServers).servers["change"] is not changed
        assert core.get(McpServers).servers["change"].config.timeout == 7
        assert core.get(McpServers).places.log_file("keep").read_text().count("testserver: started") == starts
        assert unwrapped(await turn(core, fake, "mcp_new_echo", {"text": "fresh"}), "new") == "fresh"
        await core.settings.update(lambda config: setattr(config.section(McpConfig).servers["keep"], "enabled", False))
        assert core.get(McpServers).states()["keep"] == "disabled" and "mcp_keep_echo" not in core.tools.names
    finally:
        await core.close()


async def test_closing_the_core_leaves_no_server_process(home_dir: Path, model_config: dict[str, Any],
                                                         memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    import os

    core = await started(home_dir, model_config, {"test": stdio_server()})
    await until(lambda: core.get(McpServers).servers["test"].state == "connected")
    pid = int(unwrapped(await turn(core, fake, "mcp_test_pid", {})))
    await core.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_result_that_escapes_half_a_character_is_read_mended_not_waited_out(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    """Before, the SDK's parser refused the line and dropped it: the call waited its time and said "no answer"."""
    raw = {"command": sys.executable, "args": [str(Path(__file__).with_name("raw_server.py"))], "timeout": 20}
    core = await started(home_dir, model_config, {"raw": raw})
    try:
        await until(lambda: core.get(McpServers).servers["raw"].state == "connected")
        result = await turn(core, fake, "mcp_raw_name_files", {})
    finally:
        await core.close()
    assert unwrapped(result, "raw") == "the file caf\ufffd.txt and half an emoji \ufffd, then a whole one \U0001f600"

"""A turn that starts while MCP servers are still connecting waits for them (up to `mcp.startup_wait`), so a
one-shot command's only turn is offered their tools; a server that never answers costs that wait once."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from desktop.core import build_core
from desktop.kernel.bus import TurnFinished, TurnProgress
from desktop.mcp import McpServers
from desktop.reminders.jobs import Job, JobStore, render
from desktop.scheduler.schedules import At
from tests.cli.test_cli import run_cli
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import stdio_server
from tests.memkeyring import MemoryKeyring


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A URL that accepts connections and never answers (the kernel accepts for a socket that only listens)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        yield f"http://127.0.0.1:{silent.getsockname()[1]}/sse"


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools") or []}


def test_the_first_turn_of_agent_m_is_offered_the_servers_tools(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url, mcp={"startup_wait": 30, "servers": {"test": stdio_server()}})  # a loaded machine
    fake.add({"content": "It is noon."})
    result = run_cli(tmp_path, "agent", "-m", "what time is it?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is noon.\n"
    assert "mcp_test_echo" in offered(fake.requests[0])
    assert "Going on without" not in result.stderr


def test_agent_m_goes_on_without_a_silent_server_and_says_so(tmp_path: Path, fake: FakeOpenAI,
                                                              silent_url: str) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url,
                 mcp={"startup_wait": 1, "servers": {"far": {"url": silent_url, "timeout": 30}}})
    fake.add({"content": "Hello."})
    result = run_cli(tmp_path, "agent", "-m", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello.\n"
    assert "Waiting for MCP servers to connect: far…" in result.stderr
    assert ("Going on without MCP server far: not connected within 1 s (its tools are offered once connected)"
            in result.stderr)


async def test_a_silent_server_costs_the_wait_once_not_every_turn(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI,
        silent_url: str) -> None:
    write_config(home_dir, **model_config, mcp={"startup_wait": 1, "servers": {"far": {"url": silent_url,
                                                                                       "timeout": 30}}})
    core = build_core()
    await core.start()
    try:
        chat = Conversation(core)
        fake.add({"content": "one"}, {"content": "two"})
        assert isinstance(await chat.ask("first"), TurnFinished)
        said = [e.text for e in chat.of(TurnProgress)]
        assert said == ["Waiting for MCP servers to connect: far…", "Going on without MCP server far: not "
                        "connected within 1 s (its tools are offered once connected)"]
        assert isinstance(await chat.ask("second"), TurnFinished)
        assert core.get(McpServers).servers["far"].state == "connecting"  # its first attempt (30 s) is still under way
        assert [e.text for e in chat.of(TurnProgress)] == said  # and the second turn did not wait for it
    finally:
        await core.close()


def test_heartbeat_and_cron_run_due_wait_for_servers_too(tmp_path: Path, fake: FakeOpenAI, silent_url: str) -> None:
    """The other one-shot commands: the heartbeat's turn is offered the tools; run-due names a late server."""
    write_config(tmp_path, model="openai/test", api_base=fake.base_url, mcp={"startup_wait": 30, "servers": {"test": stdio_server()}})  # a loaded machine
    (tmp_path / "workspace").mkdir(parents=True, exist_ok=True)
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text("## Active Tasks\n- Check the build\n")
    fake.add({"content": "The build is red."})
    beat = run_cli(tmp_path, "heartbeat")
    assert beat.returncode == 0, beat.stderr
    assert beat.stdout == "The build is red.\n" and "mcp_test_echo" in offered(fake.requests[0])

    write_config(tmp_path, model="openai/test", api_base=fake.base_url,
                 mcp={"startup_wait": 1, "servers": {"far": {"url": silent_url, "timeout": 30}}})
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    JobStore(tmp_path / "data" / "state").write(render([
        Job("a1b2c3", "desktop:plans", "Remind the user to call Sam", "Call Sam", At(due), due, due)]))
    fake.add({"content": "Time to call Sam!"})
    ran = run_cli(tmp_path, "cron", "run-due")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.endswith("Time to call Sam!\n")
    assert "Going on without MCP server far: not connected within 1 s" in ran.stderr

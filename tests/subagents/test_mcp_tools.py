"""Background tasks see MCP servers live: a server that connects while a task runs is offered to it and
called by it, through the real subagent runner and a real MCP server."""

from __future__ import annotations

from typing import Any

from desktop.core import Core
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.subagents import Subagents
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI, Step
from tests.mcp.conftest import stdio_server
from tests.subagents.test_subagents import answered_tool, is_subagent, until

WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done; echo went"


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def model(body: dict[str, Any]) -> Step:
    """The chat spawns one task; the task waits for a file, then calls the MCP echo, then reports."""
    messages = body["messages"]
    if is_subagent(body):
        results = [m["content"] for m in messages if m.get("role") == "tool"]
        if not results:
            return {"tool_calls": [{"name": "exec", "arguments": {"command": WAIT_FOR_GO}}]}
        if len(results) == 1:
            return {"tool_calls": [{"name": "mcp_test_echo", "arguments": {"text": "from the task"}}]}
        return {"content": f"Report: the server said {results[-1]!r}"}
    if answered_tool(body):
        return {"content": "Started."}
    if "[Background task" in str(messages[-1].get("content")):
        return {"content": "It finished."}
    return {"tool_calls": [{"name": "spawn", "arguments": {"task": "ask the echo server", "label": "Echo"}}]}


async def test_a_task_uses_a_server_that_connected_after_it_started(chat: Conversation, core: Core,
                                                                    fake: FakeOpenAI) -> None:
    fake.default = model
    await chat.ask("ask the echo server in the background")
    (task,) = core.get(Subagents).of(chat.key)
    await until(lambda: task.step.startswith("exec:"))  # the task runs, and no MCP server is configured yet

    def add_server(config: Any) -> None:
        config.section(McpConfig).servers["test"] = McpServerConfig(**stdio_server(), trusted=True)  # asks are tested elsewhere

    await core.settings.update(add_server)
    await until(lambda: "mcp_test_echo" in core.tools.names)
    (core.workspace / "go").write_text("")
    await until(lambda: task.status == "done")

    asked = [r for r in fake.requests if is_subagent(r)]
    assert "mcp_test_echo" not in tool_names(asked[0])
    assert "mcp_test_echo" in tool_names(asked[-1]) and not tool_names(asked[-1]) & {"spawn", "message", "cron"}
    assert "from the task" in task.result and "Error" not in task.result

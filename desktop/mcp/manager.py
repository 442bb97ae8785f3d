"""All configured MCP servers: started in the background, their tools kept in the core's registry.

The registry holds a server's tools while the server is configured; the model is offered them only
while it is connected (`Tool.available`), and a call meanwhile says which server is down and why."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.kernel.bus import Publish
from desktop.mcp import connection
from desktop.mcp.connection import ServerConnection
from desktop.mcp.events import McpServerChanged
from desktop.mcp.names import clean, tool_name
from desktop.mcp.results import to_output
from desktop.mcp.schema import normalise
from desktop.mcp.settings import McpServerConfig, trust_server
from desktop.tools.base import Tool, ToolContext, ToolOutput
from desktop.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from desktop.config import Config


class McpTool(Tool):
    def __init__(self, name: str, server: ServerConnection, remote: Any) -> None:
        self.name = name
        self.server = server
        self.remote_name: str = remote.name
        self.label = f"{server.name} · {remote.name}"
        self.description = f"[MCP server {server.name}] {remote.description or remote.name}"
        self.parameters = normalise(remote.input_schema)

    @property
    def available(self) -> bool:  # type: ignore[override]
        return self.server.state == "connected"

    async def needs_approval(self, config: Config, arguments: dict[str, Any]) -> str | None:
        """A server's tools reach what no sandbox contains: they ask until the person trusts the server."""
        server = config.mcp.servers.get(self.server.name)
        if server is not None and server.trusted:
            return None
        return f"tools of MCP server '{self.server.name}' ask until you trust the server"

    def trust(self) -> tuple[str, Callable[[Config], None]]:
        name = self.server.name
        return (f"trust MCP server '{name}' (all its tools run without asking)",
                lambda config: trust_server(config, name, True))

    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        return to_output(await self.server.call(self.remote_name, args), self.server.name)


class McpServers:
    def __init__(self, tools: ToolRegistry, logs_dir: Path, publish: Publish = lambda event: None) -> None:
        self._registry = tools
        self._logs_dir = logs_dir
        self._publish = publish  # each server's state change, for Settings to show live
        self.servers: dict[str, ServerConnection] = {}
        self.disabled: dict[str, McpServerConfig] = {}
        self._names: dict[str, list[str]] = {}  # server -> tool names it registered

    def log_file(self, name: str) -> Path:
        return self._logs_dir / f"mcp-{clean(name)}.log"

    def states(self) -> dict[str, str]:
        """Each configured server's state as a person reads it, by name."""
        shown = {name: conn.describe() for name, conn in self.servers.items()}
        shown.update({name: "disabled" for name in self.disabled})
        return dict(sorted(shown.items()))

    async def apply(self, configured: dict[str, McpServerConfig]) -> None:
        """Connect new servers, stop removed or disabled ones, restart changed ones; leave the rest alone."""
        wanted = {name: c for name, c in configured.items() if c.enabled}
        self.disabled = {name: c for name, c in configured.items() if not c.enabled}
        stale = [name for name, conn in self.servers.items() if wanted.get(name) != conn.config]
        await asyncio.gather(*(self._drop(name) for name in stale))
        for name, config in wanted.items():
            if name not in self.servers:
                conn = ServerConnection(name, config, self.log_file(name), self._changed, connection.BACKOFF)
                self.servers[name] = conn
                conn.start()

    async def close(self) -> None:
        await asyncio.gather(*(self._drop(name) for name in list(self.servers)))

    async def _drop(self, name: str) -> None:
        conn = self.servers.pop(name)
        await conn.stop()
        for tool in self._names.pop(name, []):
            self._registry.unregister(tool)

    def _changed(self, conn: ServerConnection) -> None:
        if self.servers.get(conn.name) is conn and conn.state == "connected":
            self._register(conn)
        self._publish(McpServerChanged(conn.name, conn.state))

    def _register(self, conn: ServerConnection) -> None:
        """Keep the registry in step with a server's tool list (connect, refresh)."""
        old = set(self._names.get(conn.name, []))
        taken = set(self._registry.names) - old
        names = []
        for remote in conn.tools:
            name = tool_name(conn.name, remote.name, taken)
            taken.add(name)
            names.append(name)
            self._registry.register(McpTool(name, conn, remote))
        for gone in old - set(names):
            self._registry.unregister(gone)
        self._names[conn.name] = names

"""All configured MCP servers: started in the background, their tools kept in the core's registry.

The registry holds a server's tools while the server is configured; the model is offered them only
while it is connected (`Tool.available`), and a call meanwhile says which server is down and why."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from desktop.kernel.bus import Publish
from desktop.mcp import connection
from desktop.mcp.connection import ServerConnection
from desktop.mcp.events import McpServerChanged
from desktop.mcp.names import tool_name
from desktop.mcp.places import ServerPlaces
from desktop.mcp.results import resource_list, resource_output, to_output
from desktop.mcp.schema import normalise
from desktop.mcp.settings import McpConfig, McpServerConfig, trust_server
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
        server = config.section(McpConfig).servers.get(self.server.name)
        if server is not None and server.trusted:
            return None
        return f"tools of MCP server '{self.server.name}' ask until you trust the server"

    def trust(self) -> tuple[str, Callable[[Config], None]]:
        name = self.server.name
        return (f"trust MCP server '{name}' (all its tools run without asking)",
                lambda config: trust_server(config, name, True))

    def grant(self) -> str:
        return f"mcp:{self.server.name}"  # granted ahead as trust is given: by server

    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        return to_output(await self.server.call(self.remote_name, args), self.server.name)


class McpResourceList(McpTool):
    """A server's resources and resource templates, listed for the model (one per server that has any). It is
    the server's tool as far as approvals go: trusting the server trusts it."""

    def __init__(self, name: str, server: ServerConnection, read_tool: str) -> None:
        self.name = name
        self.server = server
        self.label = f"{server.name} · resources"
        self.description = (f"[MCP server {server.name}] List the resources (documents, files, records) this "
                            f"server offers and its URI templates; read one with {read_tool}.")
        self.parameters = {"type": "object", "properties": {}}

    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        return resource_list(*await self.server.list_resources(), self.server.name)


class McpResourceRead(McpTool):
    """One resource of a server read for the model: text, or a picture it can see."""

    def __init__(self, name: str, server: ServerConnection) -> None:
        self.name = name
        self.server = server
        self.label = f"{server.name} · read resource"
        self.description = (f"[MCP server {server.name}] Read one of this server's resources by its URI (from its "
                            "resource list, or a template with its parts filled in).")
        self.parameters = {"type": "object", "properties": {"uri": {"type": "string", "minLength": 1,
                                                                    "description": "The resource's URI."}},
                           "required": ["uri"]}

    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        return resource_output(await self.server.read_resource(args["uri"]), self.server.name)


class McpServers:
    def __init__(self, tools: ToolRegistry, places: ServerPlaces, publish: Publish = lambda event: None) -> None:
        self._registry = tools
        self.places = places
        self._publish = publish  # each server's state change, for Settings to show live
        self.servers: dict[str, ServerConnection] = {}
        self.disabled: dict[str, McpServerConfig] = {}
        self._names: dict[str, list[str]] = {}  # server -> tool names it registered

    def states(self) -> dict[str, str]:
        """Each configured server's state as a person reads it, by name."""
        shown = {name: conn.describe() for name, conn in self.servers.items()}
        shown.update({name: "disabled" for name in self.disabled})
        return dict(sorted(shown.items()))

    def pending(self) -> list[str]:
        """Servers whose first attempt is still under way and that a turn may still wait for: once a turn has
        waited its full startup wait for one, later turns go on without it (a server that accepts and never
        answers costs that wait once)."""
        now = asyncio.get_running_loop().time()
        return [name for name, conn in self.servers.items()
                if not conn.first_settled.is_set() and (conn.wait_ends is None or now < conn.wait_ends)]

    async def wait_for_pending(self, seconds: float) -> tuple[list[str], list[str]]:
        """Wait up to `seconds` for the servers still making their first attempt (all at once, each until its
        own wait ends); the names waited for, and those still not settled (left out of this turn)."""
        waited = self.pending()
        conns = [self.servers[name] for name in waited]
        now = asyncio.get_running_loop().time()
        for conn in conns:
            conn.wait_ends = min(math.inf if conn.wait_ends is None else conn.wait_ends, now + seconds)

        async def settled(conn: ServerConnection) -> None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, (conn.wait_ends or now) - now)):
                    await conn.first_settled.wait()

        await asyncio.gather(*(settled(conn) for conn in conns))
        return waited, [conn.name for conn in conns if not conn.first_settled.is_set()]

    async def apply(self, configured: dict[str, McpServerConfig]) -> None:
        """Connect new servers, stop removed or disabled ones, restart changed ones; leave the rest alone."""
        wanted = {name: c for name, c in configured.items() if c.enabled}
        self.disabled = {name: c for name, c in configured.items() if not c.enabled}
        stale = [name for name, conn in self.servers.items() if wanted.get(name) != conn.config]
        await asyncio.gather(*(self._drop(name) for name in stale))
        for name, config in wanted.items():
            if name not in self.servers:
                self._start(name, config)

    async def reconnect(self, name: str) -> None:
        """Start a running server's connection afresh (after a sign-in), not after its backoff."""
        conn = self.servers.get(name)
        if conn is not None:
            await self._drop(name)
            self._start(name, conn.config)

    def _start(self, name: str, config: McpServerConfig) -> None:
        conn = ServerConnection(name, config, self.places, self._changed, connection.BACKOFF)
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
        if conn.resources or conn.resource_templates:
            listing, reading = (_own_name(conn.name, what, taken) for what in ("list_resources", "read_resource"))
            names += [listing, reading]
            self._registry.register(McpResourceList(listing, conn, reading))
            self._registry.register(McpResourceRead(reading, conn))
        for gone in old - set(names):
            self._registry.unregister(gone)
        self._names[conn.name] = names


def _own_name(server: str, what: str, taken: set[str]) -> str:
    """The name of one of our tools for a server's resources, and taken from now on: `mcp_<server>_<what>`,
    or, when the server has a tool of that name itself, a hashed form of it."""
    name = tool_name(server, what, taken)
    if name in taken:
        name = tool_name(server, f"~{what}", taken)  # not a name a tool can have: always the hashed form
    taken.add(name)
    return name

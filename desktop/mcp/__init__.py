"""MCP servers as tools: configured under `mcp.servers`, connected in the background, kept alive."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.mcp.manager import McpServers

if TYPE_CHECKING:
    from desktop.core import Core


def attach_mcp(core: Core) -> McpServers:
    """Servers start connecting once the core runs (nothing waits for them), follow settings changes and
    stop when the core closes."""
    servers = McpServers(core.tools, core.home.logs_dir, core.bus.publish)

    async def follow() -> None:
        """Connect, stop or restart only the servers whose settings changed."""
        if core.running:
            await servers.apply(core.config.mcp.servers)

    core.on_start(follow)
    core.settings.subscribe("mcp", lambda changed: follow())
    core.on_close(servers.close)
    return servers

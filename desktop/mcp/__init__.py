"""MCP servers as tools: configured under `mcp.servers`, connected in the background, kept alive."""

from __future__ import annotations

from desktop.kernel.host import Feature, Host
from desktop.mcp.manager import McpServers


def attach(host: Host) -> McpServers:
    """Servers start connecting once the core runs (nothing waits for them), follow settings changes and
    stop when the core closes."""
    servers = McpServers(host.tools, host.home.logs_dir, host.publish)

    async def follow() -> None:
        """Connect, stop or restart only the servers whose settings changed."""
        if host.running:
            await servers.apply(host.config.mcp.servers)

    host.on_start(follow)
    host.settings.subscribe("mcp", lambda changed: follow())
    host.on_close(servers.close)
    return servers


FEATURE = Feature("mcp", McpServers, attach)

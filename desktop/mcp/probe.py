"""Connect to configured servers once and report their states (the CLI's `mcp list`, `mcp test`, doctor)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from desktop.mcp.manager import McpServers
from desktop.mcp.places import ServerPlaces
from desktop.mcp.settings import McpServerConfig
from desktop.tools.registry import ToolRegistry

LONGEST_WAIT = 60.0  # each connect is bounded by its server's timeout; this only guards the whole probe


@contextlib.asynccontextmanager
async def probed(configured: dict[str, McpServerConfig], places: ServerPlaces) -> AsyncIterator[McpServers]:
    """Servers connected (or failed) once; stopped again on leaving."""
    servers = McpServers(ToolRegistry(), places)
    await servers.apply(configured)
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LONGEST_WAIT):
                await asyncio.gather(*(c.wait_settled() for c in servers.servers.values()))
        yield servers
    finally:
        await servers.close()

"""What the MCP feature tells the windows: a server's state changed (Settings shows it live)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.kernel.bus import Event


@dataclass
class McpServerChanged(Event):
    """An MCP server started connecting, connected, failed, stopped or refreshed its tools."""

    name: str
    state: str  # connecting, connected, failed or stopped

"""The `mcp` section of config.yaml: MCP servers by name (desktop/config.py says how a section is declared)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.config import SECONDS, Section, setting

if TYPE_CHECKING:
    from desktop.config import Config
    from desktop.settings import Settings


@dataclass
class McpServerConfig:
    """One MCP server: a command run over stdio, or a URL (streamable HTTP, or SSE for older servers)."""

    command: str | None = setting(None, label="Command", help="A program spoken to over stdin/stdout; empty for "
                                  "a remote server.")
    args: list[str] = setting(factory=list, label="Arguments", help="The command's arguments.")
    env: dict[str, str] = setting(factory=dict, label="Environment",
                                  help="Environment variables for the command; a value may be keyring:NAME, "
                                  "read from the OS keyring when connecting.")
    cwd: str | None = setting(None, label="Working folder", help="The folder the command runs in, outside the "
                              "workspace; empty: a folder of its own in the app's data folder.")
    url: str | None = setting(None, label="URL", help="A remote server's address: streamable HTTP, or SSE when "
                              "it ends in /sse.")
    headers: dict[str, str] = setting(factory=dict, label="Headers",
                                      help="HTTP headers for a remote server; a value may be keyring:NAME.")
    transport: str | None = setting(None, label="Transport", help="stdio, streamable-http or sse; guessed from "
                                    "command or url when empty.")
    enabled: bool = setting(True, label="Enabled", help="Off keeps the server here but does not connect it.")
    timeout: float = setting(30.0, low=0, above=True, unit=SECONDS, label="Timeout",
                             help="Seconds per tool call, and to connect (at least 5).")
    tools: list[str] | None = setting(None, label="Tools", help="Only these of the server's tools; all when "
                                      "empty.")
    # Not compared: trusting a server must not restart it.
    trusted: bool = setting(False, compare=False, label="Trusted", help="Its tools run without asking.")

    def invalid(self) -> str | None:
        """Why this entry cannot work, or None."""
        if bool(self.command) == bool(self.url):
            return "needs either 'command' (a program run over stdio) or 'url' (a remote server)"
        if self.transport not in (None, "stdio", "streamable-http", "http", "sse"):
            return f"has transport {self.transport!r}; use stdio, streamable-http or sse"
        if self.command and self.transport not in (None, "stdio"):
            return f"runs a command, so its transport must be stdio, not {self.transport!r}"
        if self.url and self.transport == "stdio":
            return "has a url, so its transport cannot be stdio"
        return None


def how_it_runs(server: McpServerConfig) -> str:
    """A server as a person recognises it: its command line, or its address."""
    if server.command:
        return shlex.join([server.command, *server.args])
    return server.url or ""


@dataclass
class McpConfig:
    startup_wait: float = setting(10.0, low=0, high=600, unit=SECONDS, zero="No wait", label="Wait for servers "
                                  "at start", help="Seconds a turn waits for servers still connecting after the "
                                  "app or a command starts, then goes on without them; each server costs this "
                                  "once.")
    servers: dict[str, McpServerConfig] = setting(factory=dict, item="MCP server", label="MCP servers",
                                                  help="Programs and services that give the assistant more "
                                                  "tools, by name; their tools appear as mcp_<server>_<tool>.")


SECTION = Section("mcp", McpConfig, label="MCP",
                  help="MCP servers: programs and services that give the assistant more tools.")


def trust_server(config: Config, server: str, trusted: bool) -> None:
    """Trust an MCP server (its tools run without asking: what "Always allow" on one of them saves) or withdraw
    that trust; a server no longer configured is left alone."""
    if server in config.section(McpConfig).servers:
        config.section(McpConfig).servers[server].trusted = trusted


async def set_trusted(settings: Settings, server: str, trusted: bool) -> None:
    """Settings' trust switch for a server, saved through the settings writer."""
    await settings.update(lambda config: trust_server(config, server, trusted))

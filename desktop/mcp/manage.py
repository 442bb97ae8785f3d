"""Changing the configured MCP servers by hand (the app's Settings page): every change goes through the one
settings writer, so the running servers follow config.yaml (only the server changed restarts), and a server's
state as the page shows it comes from the live connections."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.config import Config
from desktop.kernel import secrets
from desktop.mcp import oauth
from desktop.mcp.connection import KEYRING_PREFIX, ServerConnection, initialize_once
from desktop.mcp.importer import CLAUDE_DESKTOP_FILE, Imported, read_servers
from desktop.mcp.manager import McpServers
from desktop.mcp.probe import probed
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.settings import Settings


@dataclass(frozen=True)
class McpStatus:
    """An MCP server as Settings shows it: its state, its tools' names and the last error."""

    state: str  # connected, connecting, failed, refused, disabled, or stopped (not started by this app)
    tools: list[str]
    error: str | None = None

    @classmethod
    def of(cls, conn: ServerConnection) -> McpStatus:
        return cls(conn.state, [t.name for t in conn.tools], conn.error)


def status_of(servers: McpServers, name: str) -> McpStatus:
    conn = servers.servers.get(name)
    if conn is not None:
        return McpStatus.of(conn)
    return McpStatus("disabled" if name in servers.disabled else "stopped", [])


async def save_server(settings: Settings, name: str, server: McpServerConfig, replacing: str | None = None) -> None:
    """Add `name`, or change it (renamed from `replacing`)."""

    def edit(config: Config) -> None:
        if replacing is not None and replacing != name:
            config.section(McpConfig).servers.pop(replacing, None)
        config.section(McpConfig).servers[name] = server

    await settings.update(edit)


async def remove_server(settings: Settings, name: str) -> None:
    def edit(config: Config) -> None:
        config.section(McpConfig).servers.pop(name, None)

    await settings.update(edit)


async def set_server_enabled(settings: Settings, name: str, enabled: bool) -> None:
    def edit(config: Config) -> None:
        if name in config.section(McpConfig).servers:
            config.section(McpConfig).servers[name].enabled = enabled

    await settings.update(edit)


async def set_startup_wait(settings: Settings, seconds: float) -> None:
    def edit(config: Config) -> None:
        config.section(McpConfig).startup_wait = seconds

    await settings.update(edit)


async def probe_server(servers: McpServers, name: str, server: McpServerConfig) -> McpStatus:
    """Connect once apart from the running connections (a disabled server too), list its tools, stop."""
    async with probed({name: dataclasses.replace(server, enabled=True)}, servers.places) as probe:
        return McpStatus.of(probe.servers[name])


async def sign_in(servers: McpServers | None, name: str, server: McpServerConfig,
                  open_browser: Callable[[str], None]) -> None:
    """Sign in to a remote server in the browser, then connect it with the new sign-in (`servers`: the running
    connections, None for a command with none). Raises SignInFailed."""
    assert server.url
    await oauth.sign_in(name, server.url, lambda auth: initialize_once(server, name, auth), open_browser)
    if servers is not None:
        await servers.reconnect(name)


async def is_signed_in(name: str, server: McpServerConfig) -> bool:
    """Whether a sign-in is stored for this remote server (False when the keyring cannot say)."""
    if not server.url:
        return False
    try:
        return await oauth.signed_in(name, server.url)
    except secrets.KeyringUnavailable:
        return False


async def sign_out(servers: McpServers | None, name: str, server: McpServerConfig) -> None:
    """Forget the server's sign-in (tokens and registered client) and connect without it."""
    assert server.url
    await oauth.sign_out(name, server.url)
    if servers is not None:
        await servers.reconnect(name)


async def claude_desktop_file() -> Path | None:
    """Claude Desktop's server list, when it is installed here."""
    path = CLAUDE_DESKTOP_FILE.expanduser()
    return path if await asyncio.to_thread(path.is_file) else None


async def preview_import(settings: Settings, path: Path) -> Imported:
    """What importing `path` would add and skip, nothing written yet (names already configured are skipped,
    never overwritten). Raises NotAServerList when the file lists no servers."""
    existing = set((await settings.read()).config.section(McpConfig).servers)
    return await asyncio.to_thread(read_servers, path, existing)


async def add_imported(settings: Settings, found: Imported) -> None:
    """Add the servers a preview found (their tokens and keys to the keyring); one configured meanwhile under the
    same name is kept. Raises SettingsError, OSError or KeyringUnavailable when nothing could be added."""
    added = {name: await keep_secrets_in_keyring(name, server) for name, server in found.added.items()}
    if added:
        await settings.update(lambda config: config.section(McpConfig).servers.update(
            {k: v for k, v in added.items() if k not in config.section(McpConfig).servers}))


def looks_secret(name: str) -> bool:
    """An environment variable or header whose value is a credential (Authorization, *token*, *key*,
    *secret*, *password*): such values go to the OS keyring, never to config.yaml."""
    lowered = name.lower()
    return lowered in ("authorization", "proxy-authorization", "cookie") or any(
        word in lowered for word in ("token", "key", "secret", "password", "passwd"))


async def keep_secrets_in_keyring(name: str, server: McpServerConfig) -> McpServerConfig:
    """`server` with each secret-looking env or header value stored in the OS keyring as `mcp.<server>.<var>`
    and written as `keyring:mcp.<server>.<var>` (read back when connecting). Raises KeyringUnavailable (with
    how to fix it) when the keyring cannot take them: the form keeps what was typed."""

    def moved(values: dict[str, str]) -> dict[str, str]:
        kept = {}
        for var, value in values.items():
            if looks_secret(var) and value and not value.startswith(KEYRING_PREFIX):
                entry = f"mcp.{name}.{var}".replace(",", "_")
                secrets.set_key(entry, value)
                value = KEYRING_PREFIX + entry
            kept[var] = value
        return kept

    env, headers = await asyncio.to_thread(lambda: (moved(server.env), moved(server.headers)))
    return dataclasses.replace(server, env=env, headers=headers)

"""Servers from other apps' files, with a reason for each one left out: Claude Desktop and Cursor
(`{"mcpServers": ...}`), VS Code (`mcp.json`: `{"servers": ...}`, or `"mcp": {"servers": ...}` in its settings.json;
comments and trailing commas allowed) and Goose (`extensions:` in its config.yaml). Reading never writes:
what it found is shown before anything is added (desktop/mcp/manage.py adds it)."""

from __future__ import annotations

import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.mcp.settings import McpServerConfig, how_it_runs

LIMIT = 10_000_000  # bytes: an app's config file is kilobytes; more is the wrong file, read whole into memory
CLAUDE_DESKTOP_FILE = Path("~/.config/Claude/claude_desktop_config.json")
_TRANSPORTS = {"stdio": "stdio", "sse": "sse", "http": "streamable-http", "streamable-http": "streamable-http",
               "streamableHttp": "streamable-http", "streamable_http": "streamable-http"}
# Goose's own extensions, run inside Goose: nothing another app can start
_GOOSE_BUILT_IN = {"builtin", "platform", "frontend", "inline_python"}


class NotAServerList(Exception):
    """The file cannot be read as a list of MCP servers at all."""


@dataclass
class Imported:
    source: str  # whose format the file is in, as a person names it
    added: dict[str, McpServerConfig] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why
    notes: dict[str, str] = field(default_factory=dict)  # name -> what an added server still needs


Reader = Callable[[Any, Imported, str], McpServerConfig]


def read_servers(path: Path, existing: set[str]) -> Imported:
    """Parse `path`; servers already configured under the same name are skipped, never overwritten."""
    data = _load(path)
    source, entries, reader = _format(data, path)
    result = Imported(source)
    for name, entry in entries.items():
        name = str(name)
        if not name.strip():  # a row nobody could name, edit (the form wants a name) or tell apart
            result.skipped[f"“{name}”"] = "a server needs a name"
            continue
        if name in existing:
            result.skipped[name] = "a server of that name is already configured"
            continue
        try:
            result.added[name] = reader(entry, result, name)
        except ValueError as exc:
            result.skipped[name] = str(exc)
    return result


def described(found: Imported, *, done: bool) -> list[str]:
    """One line a server: what an import adds (or would add), with what it still needs, and what it skips, why."""
    add, skip = ("added", "skipped") if done else ("will add", "will skip")
    lines = []
    for name, server in found.added.items():
        off = "" if server.enabled else " (disabled, as in the file)"
        note = f"; {found.notes[name]}" if name in found.notes else ""
        lines.append(f"{add} {name}: {how_it_runs(server)}{off}{note}")
    lines.extend(f"{skip} {name}: {why}" for name, why in found.skipped.items())
    return lines


def _load(path: Path) -> Any:
    import json5
    import yaml

    try:
        shape = path.stat()
        if not stat.S_ISREG(shape.st_mode):  # a pipe or a device: reading waits for a writer, or never ends
            raise NotAServerList(f"{path} is not a regular file; give the server list's file")
        if shape.st_size > LIMIT:
            raise NotAServerList(f"{path} is {shape.st_size // 1_000_000} MB; a server list is a small text file "
                                 f"(at most {LIMIT // 1_000_000} MB)")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise NotAServerList(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise NotAServerList(f"{path} is not a text file") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise NotAServerList(f"{path} is not YAML ({str(exc).splitlines()[0]})") from None
    try:
        return json5.loads(text)
    except ValueError as exc:
        raise NotAServerList(f"{path} is not JSON ({exc})") from None


def _format(data: Any, path: Path) -> tuple[str, dict[Any, Any], Reader]:
    """Which app's file this is, its entries and how to read one."""
    if isinstance(data, dict):
        nested = data.get("mcp")
        vscode_settings: dict[str, Any] = nested if isinstance(nested, dict) else {}
        if isinstance(data.get("mcpServers"), dict):
            return "Claude Desktop / Cursor", data["mcpServers"], _server
        if isinstance(data.get("servers"), dict):
            return "VS Code", data["servers"], _vscode_server
        if isinstance(vscode_settings.get("servers"), dict):
            return "VS Code", vscode_settings["servers"], _vscode_server
        if isinstance(data.get("extensions"), dict):
            return "Goose", data["extensions"], _goose_server
    raise NotAServerList(f'{path} lists no MCP servers: it has no "mcpServers" (Claude Desktop, Cursor), '
                         '"servers" (VS Code\'s mcp.json) or "extensions" (Goose\'s config.yaml)')


def _server(entry: Any, found: Imported, name: str) -> McpServerConfig:
    if not isinstance(entry, dict):
        raise ValueError("not a mapping of settings")
    kind = entry.get("transport") or entry.get("type")
    if kind is not None and kind not in _TRANSPORTS:
        raise ValueError(f"unknown transport {kind!r}")
    server = McpServerConfig(
        command=_text(entry, "command"), args=_texts(entry, "args"), env=_mapping(entry, "env"),
        cwd=_text(entry, "cwd"), url=_text(entry, "url") or _text(entry, "serverUrl"),
        headers=_mapping(entry, "headers"), transport=_TRANSPORTS.get(kind) if kind else None,
        enabled=not entry.get("disabled", False))
    return _checked(server)


def _vscode_server(entry: Any, found: Imported, name: str) -> McpServerConfig:
    """As Claude Desktop's, except that VS Code fills in `${...}` (an input it asks for, a variable) when it starts
    the server: such a server cannot be taken over as it is written."""
    server = _server(entry, found, name)
    written = [server.command, server.url, server.cwd, *server.args, *server.env.values(), *server.headers.values()]
    placeholder = next((value for value in written if value and "${" in value), None)
    if placeholder is not None:
        start = placeholder.index("${")
        raise ValueError(f"uses {placeholder[start:placeholder.find('}', start) + 1]}, which VS Code fills in "
                         "itself; add it with Add server… and type the value there")
    env_file = entry.get("envFile")
    if env_file:
        found.notes[name] = f"its variables from {env_file} are not read: add them with Edit…"
    return server


def _goose_server(entry: Any, found: Imported, name: str) -> McpServerConfig:
    if not isinstance(entry, dict):
        raise ValueError("not a mapping of settings")
    kind = entry.get("type")
    if kind in _GOOSE_BUILT_IN:
        raise ValueError("built into Goose, not a server of its own")
    if kind not in ("stdio", "sse", "streamable_http"):
        raise ValueError(f"unknown extension type {kind!r}")
    local = kind == "stdio"
    timeout = entry.get("timeout")
    server = McpServerConfig(
        command=_text(entry, "cmd") if local else None, args=_texts(entry, "args") if local else [],
        env=_mapping(entry, "envs") if local else {}, url=None if local else _text(entry, "uri"),
        headers={} if local else _mapping(entry, "headers"), transport=_TRANSPORTS[kind],
        enabled=entry.get("enabled") is not False, tools=_texts(entry, "available_tools") or None)
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        server.timeout = float(timeout)
    kept_by_goose = [key for key in _texts(entry, "env_keys") if key not in server.env]
    if kept_by_goose:
        found.notes[name] = (f"needs {', '.join(kept_by_goose)}, which Goose keeps in its own secret store: "
                             "add the value with Edit…")
    return _checked(server)


def _checked(server: McpServerConfig) -> McpServerConfig:
    if server.transport == "stdio" and server.url:
        server.transport = None
    reason = server.invalid()
    if reason:
        raise ValueError(reason)
    return server


def _text(entry: dict[str, Any], key: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"'{key}' is not text")
    return value


def _texts(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{key}' is not a list of text")
    return value


def _mapping(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"'{key}' is not a mapping")
    return {str(k): str(v) for k, v in value.items()}

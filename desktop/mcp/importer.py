"""Servers from a Claude Desktop / Cursor style `{"mcpServers": {...}}` file, with a reason for each one left out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.mcp.settings import McpServerConfig

CLAUDE_DESKTOP_FILE = Path("~/.config/Claude/claude_desktop_config.json")
_TRANSPORTS = {"stdio": "stdio", "sse": "sse", "http": "streamable-http", "streamable-http": "streamable-http",
               "streamableHttp": "streamable-http"}


class NotAServerList(Exception):
    """The file cannot be read as a list of MCP servers at all."""


@dataclass
class Imported:
    added: dict[str, McpServerConfig] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # name -> why


def read_servers(path: Path, existing: set[str]) -> Imported:
    """Parse `path`; servers already configured under the same name are skipped, never overwritten."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise NotAServerList(f"cannot read {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise NotAServerList(f"{path} is not JSON ({exc})") from None
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise NotAServerList(f'{path} has no "mcpServers" mapping (the Claude Desktop and Cursor format)')
    result = Imported()
    for name, entry in entries.items():
        if name in existing:
            result.skipped[name] = "a server of that name is already configured"
            continue
        try:
            result.added[name] = _server(entry)
        except ValueError as exc:
            result.skipped[name] = str(exc)
    return result


def _server(entry: Any) -> McpServerConfig:
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

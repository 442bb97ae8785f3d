"""Names the model sees for MCP tools: `mcp_<server>_<tool>`, within what function calling accepts.

A name depends only on its server and tool, never on which server connected first: the plain form is used
only when it says exactly which server and tool it is (nothing replaced, no `_` in the server name, so the
first `_` after `mcp_` ends the server); any other gets a hash of the original names."""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")
_UNSAFE_SERVER = re.compile(r"[^a-zA-Z0-9-]+")


def clean(part: str) -> str:
    return _UNSAFE.sub("_", part).strip("_") or "x"


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """`mcp_<server>_<tool>`, or that shortened and marked with a hash of the server and tool when the
    plain form would be ambiguous or too long. `taken` only matters if two hashes collide."""
    shown_server = _UNSAFE_SERVER.sub("-", server).strip("-") or "x"
    name = f"mcp_{shown_server}_{clean(tool)}"
    if shown_server == server and clean(tool) == tool and len(name) <= MAX_LENGTH:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()
    for size in (8, 16, 32):
        hashed = f"{name[:MAX_LENGTH - size - 1]}_{digest[:size]}"
        if hashed not in taken:
            break
    return hashed

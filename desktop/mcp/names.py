"""Names the model sees for MCP tools: `mcp_<server>_<tool>`, within what function calling accepts."""

from __future__ import annotations

import hashlib
import re

MAX_LENGTH = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def clean(part: str) -> str:
    return _UNSAFE.sub("_", part).strip("_") or "x"


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """`mcp_<server>_<tool>` sanitised; when too long or already taken, shortened with a hash of the
    original names, so the same server and tool always get the same name."""
    name = f"mcp_{clean(server)}_{clean(tool)}"
    if len(name) <= MAX_LENGTH and name not in taken:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[:MAX_LENGTH - len(digest) - 1]}_{digest}"

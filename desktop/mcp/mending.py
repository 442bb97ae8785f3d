"""A server's message the SDK could not read because its JSON escapes half a character, read after all.

JSON lets a string escape a lone surrogate (`"\\udcff"`): a server that cuts text between an emoji's two halves
(JavaScript's `slice` does), or that names a file whose name is not UTF-8, sends one. The SDK's parser refuses the
whole line, passes the error along and drops the message, so the call it answered waited out its time and said
"no answer". Python's own json reads such escapes; the text is then mended like every other text that enters the
app (desktop/kernel/wellformed.py: half a character becomes U+FFFD) and checked as a message again."""

from __future__ import annotations

import json
from typing import Any

from desktop.kernel.wellformed import well_formed_json


def mended(error: Exception) -> Any | None:
    """The SessionMessage `error` (what the transport passed along for a line it could not parse) stood for, or
    None when it is not JSON that only failed on its escapes."""
    from mcp import types
    from mcp.shared.message import SessionMessage
    from pydantic import ValidationError

    if not isinstance(error, ValidationError):
        return None
    raw = next((e.get("input") for e in error.errors() if e.get("type") == "json_invalid"), None)
    if not isinstance(raw, (str, bytes)):
        return None
    try:
        message = types.jsonrpc_message_adapter.validate_python(well_formed_json(json.loads(raw)), by_name=False)
    except (ValueError, RecursionError):  # not JSON at all, or not a message: the error stands
        return None
    return SessionMessage(message)

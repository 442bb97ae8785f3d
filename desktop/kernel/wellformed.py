"""Text that can be written as UTF-8, for what arrives from outside the app's own code.

Python strings may hold lone surrogates, which no UTF-8 file or JSON body can carry: a file name that is not
valid UTF-8 (the OS hands it over with its bytes escaped as surrogates, and a sandboxed command can make such a
name in the workspace), or a `\\udcff` escape in JSON from a model server or an MCP server. One such character
in a tool's output or a model's answer made saving the chat, and every later call with it in the history,
fail. So outside text is mended where it enters: tool outputs (desktop/tools/registry.py), the model's
answer (desktop/providers/streaming.py), whatever else the model helper hands the app (desktop/providers/
helper_main.py: a server's error, a transcript), and what is read from the workspace or the command line."""

from __future__ import annotations

from typing import Any


def well_formed(text: str) -> str:
    """`text` with surrogate pairs joined (a server that split one character's escapes across two strings) and
    lone surrogates replaced by U+FFFD. Text that is already well formed is returned as it is, at the cost of
    one encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def ends_in_high_surrogate(text: str) -> bool:
    """True when the last character may be the first half of a pair whose second half has not arrived yet."""
    return bool(text) and "\ud800" <= text[-1] <= "\udbff"


def well_formed_json(value: Any) -> Any:
    """`value` (parsed JSON or YAML) with every string in it, keys too, made `well_formed`: a `\\udcff` escape
    parses to a lone surrogate. Other values are returned as they are."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [well_formed_json(item) for item in value]
    if isinstance(value, dict):
        return {well_formed_json(key): well_formed_json(item) for key, item in value.items()}
    return value

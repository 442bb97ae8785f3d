"""How the app and its model helper talk (desktop/providers/helper.py): JSON messages over one socket, each
sent as its length (4 bytes, big-endian) and then its UTF-8 text.

A length prefix rather than lines: a message holds a whole conversation (megabytes) and a line reader needs a
limit it could overrun; reading a known length needs none."""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any

_LENGTH = struct.Struct(">I")


def frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return _LENGTH.pack(len(data)) + data


async def read(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None when the other side closed the socket (also in the middle of one)."""
    try:
        (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
        data = await reader.readexactly(length)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    message = json.loads(data)
    assert isinstance(message, dict)
    return message

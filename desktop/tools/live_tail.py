"""The last lines a running command has printed, sent to the chat while it runs (throttled, so a chatty
command costs the GUI a few repaints a second, not one per chunk)."""

from __future__ import annotations

import asyncio
import time

from desktop.kernel.bus import ToolProgress
from desktop.tools.base import ToolContext

TAIL_LINES = 4
TAIL_BYTES = 2_000
EVERY = 0.3  # seconds between updates at most


class LiveTail:
    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self._buffer = bytearray()
        self._sent = 0.0
        self._pending: asyncio.TimerHandle | None = None

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk
        del self._buffer[:-TAIL_BYTES]
        wait = self._sent + EVERY - time.monotonic()
        if wait <= 0:
            self._send()
        elif self._pending is None:  # the last chunk of a burst still shows, a moment later
            self._pending = asyncio.get_running_loop().call_later(wait, self._send)

    def close(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _send(self) -> None:
        self._pending = None
        self._sent = time.monotonic()
        lines = self._buffer.decode("utf-8", "replace").rstrip("\n").splitlines()[-TAIL_LINES:]
        self.ctx.publish(ToolProgress(self.ctx.session_key, self.ctx.call_id, "\n".join(lines)))

"""How many turns may run at once (`max_concurrent_turns`), with a limit that can change while turns run.

A turn waiting for the user (an approval question) steps out of its place with `released(key)`, so a
question left open for ten minutes never keeps other chats waiting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TurnGate:
    """Like a semaphore whose size follows the settings: running turns keep their places when the limit
    drops, and waiting ones start at once when it rises. Places are held by session key."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self._holders: set[str] = set()
        self._waiters: list[asyncio.Future[None]] = []

    def resize(self, limit: int) -> None:
        self.limit = limit
        self._wake()

    @asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold a place for the turn of session `key` while the block runs."""
        await self._take(key)
        try:
            yield
        finally:
            self._give(key)

    @asynccontextmanager
    async def released(self, key: str) -> AsyncIterator[None]:
        """Give up `key`'s place while the block runs (the turn waits for the user), then take one again.
        A key holding no place (a background task outside the loop's turns) just runs the block."""
        if key not in self._holders:
            yield
            return
        self._give(key)
        try:
            yield
        finally:
            await self._take(key)

    async def _take(self, key: str) -> None:
        while self.running >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.running += 1
        self._holders.add(key)

    def _give(self, key: str) -> None:
        if key in self._holders:  # a turn cancelled while taking its place back holds none
            self._holders.discard(key)
            self.running -= 1
            self._wake()

    def _wake(self) -> None:
        """Every waiter looks again, in the order they came (few turns ever wait, so no cleverness)."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

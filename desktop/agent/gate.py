"""How many turns may run at once (`max_concurrent_turns`), with a limit that can change while turns run."""

from __future__ import annotations

import asyncio
from types import TracebackType


class TurnGate:
    """Like a semaphore whose size follows the settings: running turns keep their places when the limit
    drops, and waiting ones start at once when it rises."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0
        self._waiters: list[asyncio.Future[None]] = []

    def resize(self, limit: int) -> None:
        self.limit = limit
        self._wake()

    async def __aenter__(self) -> None:
        while self.running >= self.limit:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.running += 1

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.running -= 1
        self._wake()

    def _wake(self) -> None:
        """Every waiter looks again, in the order they came (few turns ever wait, so no cleverness)."""
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)

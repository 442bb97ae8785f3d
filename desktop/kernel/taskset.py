"""Background coroutines kept referenced until done (asyncio holds tasks weakly), with failures logged.

The one helper for fire-and-forget work: a `TaskSet` per owner that must cancel its own work when it
closes (the agent loop, the shell, a window), and the module-level `spawn` for work nobody cancels."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
OnError = Callable[[BaseException], None]


class TaskSet:
    def __init__(self, name: str, on_error: OnError | None = None) -> None:
        self.name = name
        self._on_error = on_error
        self._tasks: set[asyncio.Future[Any]] = set()

    def spawn(self, coro: Awaitable[T]) -> asyncio.Future[T]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    async def cancel_all(self, grace: float = 0.0) -> None:
        """Cancel every task still running and wait up to `grace` seconds for them to unwind."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks and grace > 0:
            await asyncio.wait(tasks, timeout=grace)

    async def settle(self, within: float) -> None:
        """Wait up to `within` seconds for every task to finish, cancelling none: work that must land (a save)."""
        tasks = list(self._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=within)

    def _finished(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled() or task.exception() is None:
            return
        exc = task.exception()
        assert exc is not None
        log.error("background task of %s failed", self.name, exc_info=exc)
        if self._on_error is not None:
            self._on_error(exc)


_global = TaskSet("the app")


def spawn(coro: Awaitable[T]) -> asyncio.Future[T]:
    """Start work that is never cancelled by its starter (a button's action, a timer's run)."""
    return _global.spawn(coro)


def pending() -> int:
    """How many `spawn`ed tasks still run (tests wait for a window's work to settle)."""
    return len(_global)

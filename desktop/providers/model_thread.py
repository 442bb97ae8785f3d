"""A private event loop on a worker thread for model calls.

Building a request costs real CPU: the openai client re-validates every message on each call (about
0.25 ms per message here, ~100 ms for a 400-message session) and every streamed chunk is parsed into
pydantic objects. On the caller's loop, which in the app is the GUI thread, that would freeze the
window; on this thread the GUI keeps getting the interpreter every few milliseconds."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _worker_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="model-calls", daemon=True).start()
        return _loop


async def run_on_model_thread(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the worker loop; cancelling the caller cancels it there too."""
    future = asyncio.run_coroutine_threadsafe(coro, _worker_loop())
    return await asyncio.wrap_future(future)


def to_caller(callback: Callable[[str], None] | None, live: threading.Event) -> Callable[[str], None] | None:
    """Wrap a callback of the caller's loop so the worker thread can call it (in order, while `live`)."""
    if callback is None:
        return None
    loop = asyncio.get_running_loop()

    def deliver(piece: str) -> None:
        if live.is_set():
            callback(piece)

    def forward(piece: str) -> None:
        loop.call_soon_threadsafe(deliver, piece)

    return forward

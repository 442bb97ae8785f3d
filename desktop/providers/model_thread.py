"""A private event loop on a worker thread for model calls.

The model helper's socket is read here (desktop/providers/helper.py): a helper serves the whole process, so its
reader needs a loop that outlives any one caller's, and encoding a long conversation for it (milliseconds)
keeps off the GUI thread's loop. The keyring, asked for a call's key, may block here too."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
E = TypeVar("E")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_THREAD = "model-calls"


def model_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name=_THREAD, daemon=True).start()
        return _loop


def in_model_thread() -> bool:
    return _loop is not None and threading.current_thread().name == _THREAD


async def run_on_model_thread(coro: Coroutine[Any, Any, T]) -> T:
    """Await `coro` on the worker loop; cancelling the caller cancels it there too."""
    future = asyncio.run_coroutine_threadsafe(coro, model_loop())
    return await asyncio.wrap_future(future)


def to_caller(callback: Callable[[E], None] | None, live: threading.Event) -> Callable[[E], None] | None:
    """Wrap a callback of the caller's loop so the worker thread can call it (in order, while `live`)."""
    if callback is None:
        return None
    loop = asyncio.get_running_loop()

    def deliver(piece: E) -> None:
        if live.is_set():
            callback(piece)

    def forward(piece: E) -> None:
        loop.call_soon_threadsafe(deliver, piece)

    return forward

"""Qt tests: every `async def` test here runs on a qasync loop, which is the Qt event loop.

Never call qtbot.wait/waitUntil/waitSignal inside an async test (a nested Qt loop stalls the awaited
task and then hangs teardown); poll with `await until(...)` instead."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Iterator

import pytest
import qasync
from PySide6.QtWidgets import QApplication

from desktop.core import Core, build_core
from desktop.ui.bridge import CoreBridge


def pytest_asyncio_loop_factories(config, item):  # type: ignore[no-untyped-def]
    return {"qasync": lambda: qasync.QEventLoop(QApplication.instance() or QApplication([]))}


@pytest.fixture(autouse=True)
def collect_on_gui_thread() -> Iterator[None]:
    """Free each test's Qt objects on this thread: left to the cycle collector, they may be freed on the
    model worker thread, which leaves dangling Qt timers (a segfault about five tests later)."""
    yield
    gc.collect()


async def until(predicate: Callable[[], object], timeout: float = 10.0, message: str = "") -> None:
    """Await (on the Qt loop) until predicate() is truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting: {message or predicate}")
        await asyncio.sleep(0.01)


@pytest.fixture
async def qt_core(model_config, memory_keyring) -> AsyncIterator[Core]:  # type: ignore[no-untyped-def]
    """A running agent core on the Qt loop, talking to the scripted model server."""
    built = build_core()
    await built.start()
    yield built
    await built.close()


@pytest.fixture
async def bridge(qt_core: Core) -> AsyncIterator[CoreBridge]:
    made = CoreBridge(qt_core)
    yield made
    made.close()

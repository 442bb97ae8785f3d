"""Reminder tests run the real core on a clock and timer they drive by hand, in Paris time (DST on
2026-03-29), and collect what would have been shown as notifications."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from desktop.core import Core, build_core
from desktop.kernel.bus import Event
from desktop.kernel.notices import Notice
from desktop.scheduler import Scheduler
from desktop.tools.base import ToolContext
from tests.scheduler.fakes import ManualClock, ManualTimer

START = datetime(2026, 3, 28, 12, 0, tzinfo=UTC)  # Saturday 13:00 in Paris, the day before clocks go forward


@pytest.fixture(autouse=True)
def paris(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


class Notes:
    """The notices the cores published (what the app would show), and a way to wait for the next ones."""

    def __init__(self) -> None:
        self.shown: list[Notice] = []
        self._arrived = asyncio.Event()

    def hear(self, event: Event) -> None:
        if isinstance(event, Notice):
            self.shown.append(event)
            self._arrived.set()

    async def wait(self, count: int, timeout: float = 30) -> list[Notice]:
        async def enough() -> None:
            while len(self.shown) < count:
                self._arrived.clear()
                await self._arrived.wait()

        await asyncio.wait_for(enough(), timeout)
        return self.shown


@pytest.fixture
def notes() -> Notes:
    return Notes()


class App:
    """One run of the app on the shared home: a core on a hand-driven clock starting at `at`."""

    def __init__(self, at: datetime, notes: Notes) -> None:
        self.clock = ManualClock(at)
        self.timer = ManualTimer(self.clock)
        self.notes = notes
        self.core: Core | None = None

    async def start(self) -> Core:
        core = await asyncio.to_thread(build_core)
        core.get(Scheduler).clock, core.get(Scheduler).timer = self.clock, self.timer
        core.bus.subscribe(self.notes.hear)
        await core.start()
        self.core = core
        return core

    async def elapse(self) -> None:
        """Let the armed wait pass and start what came due."""
        self.timer.elapse()
        assert self.core is not None
        await self.core.get(Scheduler).settle()

    async def cron(self, session: str = "desktop:plans", **args: Any) -> tuple[str, bool]:
        assert self.core is not None
        outcome = await self.core.tools.run("cron", args, ToolContext(session))
        return str(outcome.output), outcome.ok


class Runs(list[App]):
    """The runs of the app in one test, in order; every run tells the same `notes`."""

    def __init__(self, notes: Notes) -> None:
        super().__init__()
        self.notes = notes


@pytest.fixture
async def apps(model_config: dict[str, Any], memory_keyring: Any, notes: Notes) -> AsyncIterator[Runs]:
    """Runs of the app, closed at the end (a test closes one itself to restart)."""
    started = Runs(notes)
    yield started
    for app in started:
        if app.core is not None and app.core.running:
            await app.core.close()


@pytest.fixture
async def app(apps: Runs) -> App:
    first = App(START, apps.notes)
    apps.append(first)
    await first.start()
    return first

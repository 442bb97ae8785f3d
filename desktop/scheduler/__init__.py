"""The scheduler: what is due when (Dream, heartbeat, reminders), on one timer that sleeps until then."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from desktop.config import Config, declared
from desktop.kernel.host import Feature, Host
from desktop.scheduler.events import ScheduledRuns
from desktop.scheduler.scheduler import Scheduler, SystemJob
from desktop.scheduler.settings import SECTION

__all__ = ["FEATURE", "AsyncioTimer", "Scheduler", "SystemJob"]


class AsyncioTimer:
    """The headless timer: one `call_later` at a time."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, delay: float, fire: Callable[[], None]) -> None:
        self.cancel()
        self._handle = asyncio.get_running_loop().call_later(delay, fire)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


def attach(host: Host) -> Scheduler:
    """One scheduler per core, started and stopped with it; any settings change re-arms it: a job's interval
    may read any key (a feature's own section too), and re-arming costs one look at each entry.
    The app swaps in its QTimer (`scheduler.timer`) before the core starts."""
    scheduler = Scheduler(busy=host.busy, runs_changed=lambda running: host.publish(ScheduledRuns(running)),
                          timer=AsyncioTimer())

    async def start() -> None:
        scheduler.start()

    host.on_start(start)
    host.on_close(scheduler.stop)
    host.settings.subscribe([key.name for key in declared(Config)], lambda _: scheduler.rearm())
    return scheduler


FEATURE = Feature("scheduler", Scheduler, attach, settings=SECTION)

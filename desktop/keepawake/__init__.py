"""Keep the computer awake while background work runs: a laptop that suspends mid-reminder or mid-task loses the
run (a model call cut off, a command killed, the answer never delivered).

While any scheduled entry (a reminder, the heartbeat, Dream) or background task runs, the app holds one logind
sleep inhibitor (desktop/keepawake/inhibitor.py), taken when the first starts and released when the last ends;
`schedules.keep_awake` turns it off. It follows the scheduler's and the background tasks' own events, so no
feature has to remember to ask for it. Where the system cannot inhibit sleep, the work runs all the same, it
is logged once, and `nanobot-tray doctor` says why."""

from __future__ import annotations

import asyncio
import logging

from desktop.keepawake.inhibitor import Unavailable, inhibit, release
from desktop.kernel.bus import Event
from desktop.kernel.host import Feature, Host
from desktop.scheduler import Scheduler
from desktop.scheduler.events import ScheduledRuns
from desktop.scheduler.settings import SchedulesConfig
from desktop.subagents import Subagents
from desktop.subagents.events import BackgroundTasks

__all__ = ["FEATURE", "KeepAwake"]

log = logging.getLogger(__name__)
WHY = "A background run (reminder, heartbeat or task) is in progress"


class KeepAwake:
    """Holds the inhibitor while background work runs; `held` says whether it does now."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._scheduled = 0
        self._tasks = 0
        self._fd: int | None = None
        self._settling: asyncio.Future[None] | None = None
        self._told_unavailable = False

    @property
    def held(self) -> bool:
        return self._fd is not None

    def heard(self, event: Event) -> None:
        if isinstance(event, ScheduledRuns):
            self._scheduled = event.running
        elif isinstance(event, BackgroundTasks):
            self._tasks = len(event.running)
        else:
            return
        self.follow()

    def follow(self) -> None:
        """Take or release the inhibitor to match what runs now (one change at a time, the latest wins)."""
        if self._settling is None or self._settling.done():
            self._settling = self.host.spawn(self._settle())

    def _wanted(self) -> bool:
        return self.host.config.section(SchedulesConfig).keep_awake and (self._scheduled + self._tasks) > 0

    async def _settle(self) -> None:
        while self.held != self._wanted():
            if self._fd is not None:
                release(self._fd)
                self._fd = None
                log.info("keep awake: released (no background work runs)")
                continue
            try:
                self._fd = await inhibit(WHY)
            except Unavailable as exc:
                if not self._told_unavailable:
                    log.info("keep awake: this computer may sleep during background work: %s", exc)
                    self._told_unavailable = True
                return
            log.info("keep awake: holding off sleep while background work runs")

    async def close(self) -> None:
        if self._settling is not None:
            self._settling.cancel()
        if self._fd is not None:
            release(self._fd)
            self._fd = None


def attach(host: Host) -> KeepAwake:
    keeper = KeepAwake(host)
    host.subscribe(keeper.heard)
    host.settings.subscribe(["schedules.keep_awake"], lambda _: keeper.follow())
    host.on_close(keeper.close)
    return keeper


FEATURE = Feature("keepawake", KeepAwake, attach, requires=(Scheduler, Subagents))

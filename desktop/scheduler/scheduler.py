"""What is due when: one timer armed for the earliest due entry, re-armed after every run and change.

Entries are system jobs a feature registers (Dream, heartbeat) and job books (reminders) that answer
"when is your next run" and "run what is due". The timer itself is given: an asyncio timer headless, a
single-shot QTimer in the app (desktop/ui/scheduler_timer.py). No wake-up comes sooner than the next due
entry, except that long waits are cut into slices of at most MAX_SLICE: timers count monotonic time,
which stops while the machine sleeps, so after a resume a due job is at most one slice late. Each time
the timer fires, wall and monotonic time elapsed are compared to log a jump (suspend, clock change)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from desktop.kernel.taskset import TaskSet
from desktop.scheduler.clock import Clock, SystemClock

log = logging.getLogger(__name__)

MAX_SLICE = 300.0  # seconds: the longest single wait, so a sleep/resume delays a due job by at most this
JUMP_TOLERANCE = 5.0  # seconds of wall time beyond monotonic time that count as a clock jump
BUSY_RETRY = 300.0  # seconds: a system job deferred by a running turn tries again this soon


class Entry(Protocol):
    name: str

    def next_run(self) -> datetime | None:
        """When this entry next has something to run; None: nothing scheduled."""

    async def fire(self, now: datetime, busy: bool) -> None:
        """Run what is due at `now` (`busy`: a turn is running) and move the next run on."""


class Timer(Protocol):
    def arm(self, delay: float, fire: Callable[[], None]) -> None:
        """Call `fire` once after `delay` seconds, replacing any earlier arming."""

    def cancel(self) -> None: ...


def wait_for(next_due: datetime | None, now: datetime) -> float | None:
    """Seconds to arm the timer for: until the next due run, at most one slice; None: nothing to wait for."""
    if next_due is None:
        return None
    return min(max(0.0, (next_due - now).total_seconds()), MAX_SLICE)


def clock_jump(wall_elapsed: float, monotonic_elapsed: float) -> float:
    """Wall seconds that passed without the timers noticing (the machine slept, or the clock was set);
    0 when within tolerance."""
    jump = wall_elapsed - monotonic_elapsed
    return jump if abs(jump) > JUMP_TOLERANCE else 0.0


def after_system_attempt(now: datetime, busy: bool, anchor: datetime) -> tuple[datetime, datetime | None]:
    """A system job came due: busy defers it by BUSY_RETRY (its interval still counts from `anchor`);
    otherwise it runs and its interval counts from now. Returns (anchor, retry_at)."""
    if busy:
        return anchor, now + timedelta(seconds=BUSY_RETRY)
    return now, None


@dataclass
class SystemJob:
    """Work a feature runs every `interval()` seconds (read at each decision: settings apply at once;
    0 turns it off). Never runs mid-turn: a busy app defers it."""

    name: str
    interval: Callable[[], float]
    run: Callable[[], Awaitable[object]]
    anchor: datetime
    retry_at: datetime | None = None

    def next_run(self) -> datetime | None:
        seconds = self.interval()
        if seconds <= 0:
            return None
        return self.retry_at or self.anchor + timedelta(seconds=seconds)

    async def fire(self, now: datetime, busy: bool) -> None:
        self.anchor, self.retry_at = after_system_attempt(now, busy, self.anchor)
        if busy:
            log.info("%s deferred: a turn is running", self.name)
            return
        await self.run()


@dataclass
class Scheduler:
    busy: Callable[[], bool]
    clock: Clock = field(default_factory=SystemClock)
    timer: Timer | None = None
    runs_changed: Callable[[int], None] = lambda _running: None  # how many entries run now, at each change
    entries: list[Entry] = field(default_factory=list)
    _firing: dict[str, asyncio.Future[None]] = field(default_factory=dict)
    _armed_at: tuple[datetime, float] | None = None
    _started: bool = False
    _tasks: TaskSet = field(default_factory=lambda: TaskSet("the scheduler"))

    def add_system_job(self, name: str, interval: Callable[[], float],
                       run: Callable[[], Awaitable[object]]) -> SystemJob:
        """Register a feature's recurring job; its first run is one interval after now."""
        job = SystemJob(name, interval, run, self.clock.now())
        self.add(job)
        return job

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        self.rearm()

    def start(self) -> None:
        """Start counting: system jobs' first interval runs from now."""
        self._started = True
        now = self.clock.now()
        for entry in self.entries:
            if isinstance(entry, SystemJob):
                entry.anchor = now
        self.rearm()

    async def stop(self) -> None:
        self._started = False
        if self.timer is not None:
            self.timer.cancel()
        await self._tasks.cancel_all(grace=1.0)

    def next_due(self) -> datetime | None:
        """The earliest next run of any entry not running right now."""
        runs = [run for entry in self.entries if entry.name not in self._firing
                for run in (entry.next_run(),) if run is not None]
        return min(runs, default=None)

    def rearm(self) -> None:
        """Arm the timer for the next due run (after a run, a settings change, a new or removed job)."""
        if not self._started or self.timer is None:
            return
        now = self.clock.now()
        delay = wait_for(self.next_due(), now)
        if delay is None:
            self.timer.cancel()
            self._armed_at = None
            return
        self._armed_at = (now, self.clock.monotonic())
        self.timer.arm(delay, self._fired)

    def _fired(self) -> None:
        if self._armed_at is not None:
            wall, mono = self._armed_at
            jump = clock_jump((self.clock.now() - wall).total_seconds(), self.clock.monotonic() - mono)
            if jump:
                log.info("the wall clock jumped %+.0f s while waiting (sleep/resume or a clock change)", jump)
        self.run_due()

    def run_due(self) -> list[str]:
        """Start every entry that is due now (each in the background); returns their names."""
        now = self.clock.now()
        busy = self.busy()
        started = []
        for entry in list(self.entries):
            due = entry.next_run()
            if entry.name in self._firing or due is None or due > now:
                continue
            started.append(entry.name)
            self._firing[entry.name] = self._tasks.spawn(self._fire(entry, now, busy))
        if started:
            self.runs_changed(len(self._firing))
        self.rearm()
        return started

    async def _fire(self, entry: Entry, now: datetime, busy: bool) -> None:
        try:
            await entry.fire(now, busy)
        except asyncio.CancelledError:
            raise
        except Exception:  # one failing job must not stop the others or the timer
            log.exception("scheduled %s failed", entry.name)
        finally:
            self._firing.pop(entry.name, None)
            self.runs_changed(len(self._firing))
            self.rearm()

    async def settle(self) -> None:
        """Wait for the runs started so far (the CLI's run-due, tests)."""
        while self._firing:
            await asyncio.gather(*self._firing.values(), return_exceptions=True)

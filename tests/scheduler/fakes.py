"""A clock and a timer the tests drive by hand: time passes only when a test says so."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta


class ManualClock:
    def __init__(self, start: datetime) -> None:
        self.wall = start
        self.mono = 1000.0

    def now(self) -> datetime:
        return self.wall

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)
        self.mono += seconds

    def sleep_machine(self, seconds: float) -> None:
        """Suspend: wall time moves on, monotonic time (and every timer counting it) stands still."""
        self.wall += timedelta(seconds=seconds)


class ManualTimer:
    """Records what the scheduler armed; `elapse` lets that time pass on the clock and fires."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.delay: float | None = None
        self.armings: list[float] = []
        self._fire: Callable[[], None] | None = None

    def arm(self, delay: float, fire: Callable[[], None]) -> None:
        self.delay, self._fire = delay, fire
        self.armings.append(delay)

    def cancel(self) -> None:
        self.delay, self._fire = None, None

    def elapse(self) -> None:
        assert self.delay is not None and self._fire is not None, "the timer is not armed"
        fire, delay = self._fire, self.delay
        self.delay, self._fire = None, None
        self.clock.advance(delay)
        fire()

"""The scheduler's clock: wall time for "when is it due", monotonic time to notice the wall clock jump.

Tests pass their own clock (same two methods) so nothing waits on real time."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The wall time, timezone-aware."""

    def monotonic(self) -> float:
        """Seconds that never jump (stops while the machine sleeps, like the timers that wait on it)."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

"""What the scheduler tells other features: how many of its entries (Dream, the heartbeat, reminders) are running
now, published whenever that changes (the keep-awake feature holds off sleep while any is)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.kernel.bus import Event


@dataclass(frozen=True)
class ScheduledRuns(Event):
    running: int

"""The app's scheduler timer: a single-shot QTimer the scheduler arms, re-arms and cancels."""

from __future__ import annotations

import asyncio

from desktop.ui.scheduler_timer import SchedulerTimer
from tests.ui.conftest import until


async def test_fires_once_per_arming_and_a_new_arming_replaces_the_old() -> None:
    timer = SchedulerTimer()
    fired: list[str] = []
    timer.arm(3600, lambda: fired.append("late"))
    timer.arm(0.01, lambda: fired.append("soon"))
    await until(lambda: fired)
    await asyncio.sleep(0.05)
    assert fired == ["soon"]
    timer.arm(0.01, lambda: fired.append("cancelled"))
    timer.cancel()
    await asyncio.sleep(0.05)
    assert fired == ["soon"]

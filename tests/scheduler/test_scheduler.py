"""The scheduler's decisions with a hand-driven clock and timer: one arming for the next due job, slices
for long waits, busy deferral of system jobs, settings changes, clock jumps, failures contained."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest

from desktop.core import Core
from desktop.scheduler import AsyncioTimer, Scheduler
from desktop.scheduler.scheduler import BUSY_RETRY, MAX_SLICE, clock_jump, wait_for
from desktop.scheduler.settings import SchedulesConfig
from tests.scheduler.fakes import ManualClock, ManualTimer

START = datetime(2026, 5, 4, 8, 0, tzinfo=UTC)


class Harness:
    def __init__(self) -> None:
        self.clock = ManualClock(START)
        self.timer = ManualTimer(self.clock)
        self.busy = False
        self.scheduler = Scheduler(lambda: self.busy, self.clock, self.timer)
        self.runs: list[tuple[str, datetime]] = []
        self.intervals: dict[str, float] = {}

    def job(self, name: str, interval: float) -> None:
        self.intervals[name] = interval

        async def run() -> None:
            self.runs.append((name, self.clock.now()))

        self.scheduler.add_system_job(name, lambda: self.intervals[name], run)

    async def elapse(self) -> None:
        self.timer.elapse()
        await self.scheduler.settle()


@pytest.fixture
def h() -> Harness:
    return Harness()


async def test_the_timer_waits_for_the_earliest_job_only(h: Harness) -> None:
    h.job("often", 120)
    h.job("rarely", 240)
    assert h.timer.delay is None  # nothing is armed before start
    h.scheduler.start()
    assert h.timer.delay == 120
    await h.elapse()
    assert h.runs == [("often", START + timedelta(seconds=120))]
    assert h.timer.delay == 120  # "rarely" is due at 240, "often" again at 240
    await h.elapse()
    assert [name for name, _ in h.runs] == ["often", "often", "rarely"]
    assert set(h.timer.armings) == {120}  # never a shorter wake-up than the next due job


async def test_long_waits_are_cut_into_slices_without_running_early(h: Harness) -> None:
    h.job("dream", 7200)
    h.scheduler.start()
    wakes = 0
    while not h.runs:
        assert h.timer.delay is not None and h.timer.delay <= MAX_SLICE
        assert wakes < 7200 / MAX_SLICE, "the job never ran"
        await h.elapse()
        wakes += 1
    assert h.runs == [("dream", START + timedelta(hours=2))]
    assert wakes == 7200 / MAX_SLICE


async def test_a_busy_app_defers_a_system_job_and_retries_soon(h: Harness) -> None:
    h.job("dream", 240)
    h.scheduler.start()
    h.busy = True
    await h.elapse()
    assert h.runs == [] and h.timer.delay == BUSY_RETRY
    await h.elapse()  # still busy
    assert h.runs == [] and h.timer.delay == BUSY_RETRY
    h.busy = False
    await h.elapse()
    assert h.runs == [("dream", START + timedelta(seconds=240 + 2 * BUSY_RETRY))]
    assert h.timer.delay == 240  # the interval counts from the run


async def test_interval_changes_apply_at_once_and_zero_turns_a_job_off(h: Harness) -> None:
    h.job("heartbeat", 1800)
    h.scheduler.start()
    h.clock.advance(200)
    h.intervals["heartbeat"] = 240  # a settings change: the interval still counts from the start
    h.scheduler.rearm()
    assert h.timer.delay == 40
    h.intervals["heartbeat"] = 0
    h.scheduler.rearm()
    assert h.timer.delay is None and h.scheduler.next_due() is None


async def test_a_wall_clock_jump_is_noticed_and_a_job_due_meanwhile_runs(h: Harness,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    h.job("dream", 3600)
    h.scheduler.start()
    h.clock.sleep_machine(2 * 3600)  # the laptop sleeps two hours; the armed slice has not run out
    caplog.set_level(logging.INFO, "desktop.scheduler")
    await h.elapse()  # one slice of monotonic time later
    assert "wall clock jumped +7200 s" in caplog.text
    assert [name for name, _ in h.runs] == ["dream"]  # once, not twice for the two hours


async def test_a_failing_job_does_not_stop_the_others(h: Harness) -> None:
    h.job("fine", 120)

    async def broken() -> None:
        raise RuntimeError("boom")

    h.scheduler.add_system_job("broken", lambda: 120, broken)
    h.scheduler.start()
    await h.elapse()
    await h.elapse()
    assert [name for name, _ in h.runs] == ["fine", "fine"] and h.timer.delay == 120


def test_pure_decisions() -> None:
    assert wait_for(None, START) is None
    assert wait_for(START - timedelta(seconds=5), START) == 0
    assert wait_for(START + timedelta(seconds=30), START) == 30
    assert wait_for(START + timedelta(days=3), START) == MAX_SLICE
    assert clock_jump(600.0, 599.0) == 0
    assert clock_jump(4200.0, 600.0) == 3600


async def test_headless_core_runs_its_jobs_on_an_asyncio_timer(core: Core) -> None:
    assert isinstance(core.get(Scheduler).timer, AsyncioTimer)
    ran = asyncio.Event()

    async def run() -> None:
        ran.set()

    core.get(Scheduler).add_system_job("quick", lambda: 0.05, run)
    await asyncio.wait_for(ran.wait(), 5)


async def test_a_settings_change_rearms_the_core_scheduler(core: Core) -> None:
    clock = ManualClock(START)
    timer = ManualTimer(clock)
    core.get(Scheduler).clock, core.get(Scheduler).timer = clock, timer
    core.get(Scheduler).start()
    assert timer.delay == MAX_SLICE  # Dream every 2 hours
    clock.advance(30)

    def shorter(config: object) -> None:
        config.section(SchedulesConfig).dream_interval = 120

    await core.settings.update(shorter)
    assert timer.delay == 90


async def test_a_change_to_any_setting_a_job_reads_rearms_the_core_scheduler(core: Core) -> None:
    """A feature's job may take its interval from its own section, not only from `schedules`."""
    clock = ManualClock(START)
    timer = ManualTimer(clock)
    scheduler = core.get(Scheduler)
    scheduler.clock, scheduler.timer = clock, timer
    scheduler.start()

    async def run() -> None:
        pass

    scheduler.add_system_job("elsewhere", lambda: 60.0 * core.config.max_concurrent_turns, run)
    assert timer.delay == 180
    clock.advance(30)

    def fewer(config: object) -> None:
        config.max_concurrent_turns = 1  # type: ignore[attr-defined]

    await core.settings.update(fewer)
    assert timer.delay == 30

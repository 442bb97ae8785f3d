"""Next-run decisions for every schedule kind, across DST changes, without catch-up bursts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from desktop.scheduler.schedules import At, Cron, Every, ScheduleError, check_cron, describe, next_run, zone

PARIS = ZoneInfo("Europe/Paris")


def test_one_shot_runs_once() -> None:
    when = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    assert next_run(At(when), when - timedelta(seconds=1)) == when
    assert next_run(At(when), when) is None


def test_every_falls_on_its_grid_and_skips_missed_runs() -> None:
    anchor = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    every = Every(3600, anchor)
    assert next_run(every, anchor - timedelta(hours=5)) == anchor
    assert next_run(every, anchor) == anchor + timedelta(hours=1)
    # the app was closed for two days: the next run is the next slot, not 48 catch-up runs
    assert next_run(every, anchor + timedelta(days=2, minutes=10)) == anchor + timedelta(days=2, hours=1)


def test_cron_daily_keeps_local_time_across_spring_forward() -> None:
    # Europe/Paris moves from +01:00 to +02:00 on 2026-03-29 at 02:00
    daily = Cron("0 9 * * *", "Europe/Paris")
    first = next_run(daily, datetime(2026, 3, 28, 0, 0, tzinfo=UTC))
    second = next_run(daily, first)  # type: ignore[arg-type]
    assert first == datetime(2026, 3, 28, 8, 0, tzinfo=UTC)
    assert second == datetime(2026, 3, 29, 7, 0, tzinfo=UTC)
    assert second.astimezone(PARIS).hour == 9  # type: ignore[union-attr]


def test_cron_in_the_skipped_hour_runs_an_hour_later_on_the_clock() -> None:
    gap = Cron("30 2 * * *", "Europe/Paris")
    run = next_run(gap, datetime(2026, 3, 28, 12, 0, tzinfo=UTC))
    assert run is not None and run.astimezone(PARIS).strftime("%d %H:%M") == "29 03:30"


def test_cron_in_the_repeated_hour_runs_once_and_moves_on() -> None:
    # 2026-10-25 03:00 +02:00 goes back to 02:00 +01:00: 02:30 happens twice
    twice = Cron("30 2 * * *", "Europe/Paris")
    first = next_run(twice, datetime(2026, 10, 24, 12, 0, tzinfo=UTC))
    assert first == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    then = next_run(twice, first)  # type: ignore[arg-type]
    assert then == datetime(2026, 10, 26, 1, 30, tzinfo=UTC)


def test_cron_every_fifteen_minutes_never_goes_backwards_in_the_fall_back_hour() -> None:
    quarter = Cron("*/15 * * * *", "Europe/Paris")
    at = datetime(2026, 10, 24, 23, 50, tzinfo=UTC)
    runs = []
    for _ in range(12):
        at = next_run(quarter, at)  # type: ignore[assignment]
        runs.append(at)
    assert runs == sorted(runs) and len(set(runs)) == len(runs)


def test_bad_input_says_what_is_wrong() -> None:
    with pytest.raises(ScheduleError, match="unknown timezone 'Mars/Base'"):
        zone("Mars/Base")
    with pytest.raises(ScheduleError, match="5 fields"):
        check_cron("0 9 * *")
    with pytest.raises(ScheduleError, match="not a valid cron expression"):
        check_cron("0 25 * * *")
    assert check_cron(" 0  9 * * 1-5 ") == "0 9 * * 1-5"


def test_schedules_in_words() -> None:
    anchor = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    assert describe(Every(3600, anchor)) == "every hour"
    assert describe(Every(7200, anchor)) == "every 2 hours"
    assert describe(Every(90, anchor)) == "every 90 seconds"
    assert describe(At(anchor), PARIS) == "once at 2026-03-01 10:00"
    assert describe(Cron("0 9 * * 1-5", "Europe/Paris")) == "weekdays at 09:00 (Europe/Paris)"
    assert describe(Cron("30 8 * * 1", "UTC")) == "Mondays at 08:30 (UTC)"
    assert describe(Cron("5 7 * * *", "UTC")) == "every day at 07:05 (UTC)"
    assert describe(Cron("0 12 15 * *", "UTC")) == "every month on day 15 at 12:00 (UTC)"
    assert describe(Cron("*/15 * * * *", "UTC")) == "every 15 minutes (UTC)"
    assert describe(Cron("0 9 * 1 *", "UTC")) == "cron '0 9 * 1 *' (UTC)"
    assert describe(Cron("0 9-17 * * *", "UTC")) == "cron '0 9-17 * * *' (UTC)"

"""When a job runs: once at a time, every N seconds, or on a 5-field cron expression in an IANA timezone.

Plain values and functions, no I/O: `next_run(schedule, after)` is the whole decision, so the DST and
catch-up rules are tested directly. croniter is imported on first use (it costs ~90 ms at start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MIN_EVERY = 60  # seconds: a shorter repeat is a busy loop, not a reminder
_MAX_CRON_STEPS = 1000  # candidates tried past a DST fold before giving up


class ScheduleError(ValueError):
    """A schedule that cannot be used; the message says why in words a user (or model) can act on."""


@dataclass(frozen=True)
class At:
    """Once, at `when` (aware)."""

    when: datetime


@dataclass(frozen=True)
class Every:
    """Every `seconds`, counted from `anchor` (aware): runs fall on anchor + k * seconds."""

    seconds: int
    anchor: datetime


@dataclass(frozen=True)
class Cron:
    """A 5-field cron expression read in the wall-clock time of `tz` (an IANA name)."""

    expr: str
    tz: str


Schedule = At | Every | Cron


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(f"unknown timezone '{name}' (use an IANA name such as Europe/Paris)") from exc


def local_zone_name() -> str:
    """The machine's IANA timezone name (TZ first, as the C library reads it), or UTC when it cannot be told."""
    import os

    named = os.environ.get("TZ", "").removeprefix(":")
    if named:
        try:
            zone(named)
            return named
        except ScheduleError:
            pass
    local = datetime.now().astimezone().tzinfo
    key = getattr(local, "key", None)
    if key:
        return str(key)
    try:
        from pathlib import Path

        link = Path("/etc/localtime").resolve()
        if "zoneinfo" in link.parts:
            name = "/".join(link.parts[link.parts.index("zoneinfo") + 1:])
            zone(name)
            return name
    except (OSError, ScheduleError):
        pass
    return "UTC"


def check_cron(expr: str) -> str:
    """The expression normalised to single spaces, or a ScheduleError saying what is wrong."""
    from croniter import croniter

    fields = expr.split()
    if len(fields) != 5:
        raise ScheduleError("a cron expression has 5 fields (minute hour day month weekday), "
                            f"got {len(fields)}: '{expr}'")
    normal = " ".join(fields)
    if not croniter.is_valid(normal):
        raise ScheduleError(f"'{expr}' is not a valid cron expression")
    return normal


def next_run(schedule: Schedule, after: datetime) -> datetime | None:
    """The first run strictly after `after`; None when the schedule has no more runs. Recurring
    schedules give the next future slot, never the ones missed in between (no catch-up bursts)."""
    if isinstance(schedule, At):
        return schedule.when if schedule.when > after else None
    if isinstance(schedule, Every):
        if after < schedule.anchor:
            return schedule.anchor
        steps = int((after - schedule.anchor).total_seconds() // schedule.seconds) + 1
        return schedule.anchor + timedelta(seconds=steps * schedule.seconds)
    return _next_cron(schedule, after)


def _next_cron(schedule: Cron, after: datetime) -> datetime:
    """Cron fields match local wall-clock times: a time skipped by a spring-forward change runs an hour
    later on the clock; a time repeated by a fall-back change runs once (its first occurrence)."""
    from croniter import CroniterBadDateError, croniter

    tz = zone(schedule.tz)
    wall = after.astimezone(tz).replace(tzinfo=None)
    it = croniter(schedule.expr, wall)
    for _ in range(_MAX_CRON_STEPS):
        try:
            candidate = it.get_next(datetime).replace(tzinfo=tz, fold=0)
        except CroniterBadDateError:  # valid field by field, yet no date has them all
            raise ScheduleError(f"'{schedule.expr}' never comes: no date matches it (a day the month never "
                                "has, like February 31)") from None
        if candidate > after:
            return candidate.astimezone(UTC)
    raise ScheduleError(f"'{schedule.expr}' has no run after {after.isoformat()}")


def describe(schedule: Schedule, tz: Any = None) -> str:
    """The schedule in words, times in `tz` (default: the machine's local time)."""
    if isinstance(schedule, At):
        return "once at " + schedule.when.astimezone(tz).strftime("%Y-%m-%d %H:%M")
    if isinstance(schedule, Every):
        return "every " + _duration(schedule.seconds)
    return f"{_cron_words(schedule.expr) or f'cron {schedule.expr!r}'} ({schedule.tz})"


_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")


def _cron_words(expr: str) -> str | None:
    """The common shapes of a cron expression in words; None for the others (shown as the expression)."""
    minute, hour, day, month, weekday = expr.split()
    if month != "*":
        return None
    if minute.startswith("*/") and minute[2:].isdigit() and (hour, day, weekday) == ("*", "*", "*"):
        return "every " + _duration(int(minute[2:]) * 60)
    if not (minute.isdigit() and hour.isdigit()):
        return None
    at = f"at {int(hour):02d}:{int(minute):02d}"
    if day == "*":
        if weekday == "*":
            return f"every day {at}"
        if weekday == "1-5":
            return f"weekdays {at}"
        if weekday.isdigit() and int(weekday) <= 7:
            return f"{_DAYS[int(weekday) % 7]}s {at}"
    elif weekday == "*" and day.isdigit():
        return f"every month on day {day} {at}"
    return None


def _duration(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            count = seconds // size
            return unit if count == 1 else f"{count} {unit}s"
    return f"{seconds} seconds"

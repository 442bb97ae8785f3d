"""What the `cron` tool's schedule arguments mean, as plain functions: exactly one of `at`, `in`, `every`
or `cron` (+ `tz`). Every refusal says what to send instead, for a model to correct itself."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from desktop.scheduler.schedules import (
    MIN_EVERY,
    At,
    Cron,
    Every,
    Schedule,
    ScheduleError,
    check_cron,
    local_zone_name,
    next_run,
    zone,
)

KINDS = ("at", "in", "every", "cron")
MAX_SECONDS = 100 * 365 * 86_400  # an `in` or `every` beyond this is a slip (10**12 overflowed the calendar)


def parse_schedule(args: dict[str, Any], now: datetime) -> Schedule:
    """The schedule the arguments describe, or a ScheduleError saying what is wrong with them."""
    given = [kind for kind in KINDS if args.get(kind) not in (None, "")]
    if len(given) != 1:
        named = " and ".join(f"'{k}'" for k in given) if given else "none"
        raise ScheduleError(f"give exactly one of 'at' (ISO time), 'in' (seconds from now), 'every' "
                            f"(seconds) or 'cron' (5-field expression); got {named}")
    kind = given[0]
    tz = args.get("tz") or None
    if tz and kind not in ("at", "cron"):
        raise ScheduleError(f"'tz' applies to 'at' and 'cron' only, not to '{kind}'")
    value = args[kind]
    if kind == "at":
        return At(_at(str(value), tz, now))
    if kind == "in":
        seconds = _whole(value, "in")
        if seconds < 1:
            raise ScheduleError("'in' is a number of seconds from now, at least 1")
        if seconds > MAX_SECONDS:
            raise ScheduleError(f"'in' is at most {MAX_SECONDS} seconds (100 years); got {seconds}")
        return At(now + timedelta(seconds=seconds))
    if kind == "every":
        seconds = _whole(value, "every")
        if not MIN_EVERY <= seconds <= MAX_SECONDS:
            raise ScheduleError(f"'every' must be from {MIN_EVERY} to {MAX_SECONDS} seconds (100 years), "
                                f"got {seconds}")
        return Every(seconds, now)
    expr = check_cron(str(value))
    name = tz or local_zone_name()
    zone(name)
    schedule = Cron(expr, name)
    next_run(schedule, now)  # one that never comes (Feb 31) is refused now, not saved to never run
    return schedule


def _at(text: str, tz: str | None, now: datetime) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ScheduleError(f"'at' should be an ISO time such as 2026-03-14T15:00 or "
                            f"2026-03-14T15:00:00+01:00, got '{text}'") from None
    if moment.tzinfo is not None and tz:
        raise ScheduleError("'at' already carries a UTC offset; leave out 'tz' or the offset")
    try:
        if moment.tzinfo is None:  # a naive time is the user's wall clock: here, or in `tz`
            moment = moment.replace(tzinfo=zone(tz)) if tz else moment.astimezone()
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):  # the calendar's first or last day, moved to UTC, leaves it
        raise ScheduleError(f"'at' {text} is out of range; give a time such as 2026-03-14T15:00") from None
    if moment <= now:
        local = now.astimezone()
        raise ScheduleError(f"'at' {text} is in the past (it is now {local:%Y-%m-%d %H:%M %Z}); "
                            "give a future time, or 'in' seconds from now")
    return moment


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise ScheduleError(f"'{name}' should be a whole number of seconds, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ScheduleError(f"'{name}' should be a whole number of seconds, got {value!r}") from None
    if not math.isfinite(number) or number != int(number):
        raise ScheduleError(f"'{name}' should be a whole number of seconds, got {value!r}")
    return int(number)

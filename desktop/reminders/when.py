"""When a reminder runs, in the words a person reads at a glance in the chat: "in 40 s", "tomorrow at 09:00",
"Sun 29 Mar at 09:00". Local time, like every time the app shows."""

from __future__ import annotations

from datetime import datetime, timedelta


def soon(seconds: int) -> str:
    """A wait from now, in its largest units: "in 40 s", "in 20 min", "in 1 h 30 min", "in 3 days"."""
    if seconds < 60:
        return f"in {seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"in {minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"in {hours} h" + (f" {minutes} min" if minutes else "")
    days = round(hours / 24)
    return f"in {days} day{'s' if days != 1 else ''}"


def day_and_time(moment: datetime, now: datetime | None = None) -> str:
    """The day and time of `moment`, "today" or "tomorrow" when `now` is given and it is one of those (words
    saved in a chat, read days later, get no `now`: they must stay true)."""
    at = moment.astimezone()
    clock = f"{at:%H:%M}"
    if now is not None:
        today = now.astimezone().date()
        if at.date() == today:
            return f"today at {clock}"
        if at.date() == today + timedelta(days=1):
            return f"tomorrow at {clock}"
    year = f" {at.year}" if now is not None and at.year != now.astimezone().year else ""
    return f"{at:%a} {at.day} {at:%b}{year} at {clock}"

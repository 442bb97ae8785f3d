"""Times as a person reads them: in this computer's time zone, to the minute.

Stored times carry the offset they were written with (a laptop travels; git records the author's zone),
so each is converted rather than cut as text."""

from __future__ import annotations

from datetime import datetime


def local_time(iso: str, *, seconds: bool = False) -> str:
    """'2026-03-01T09:15:00+00:00' -> '2026-03-01 10:15' in Berlin; text that is not a time comes back as is."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()  # times without a zone were written as local time already
    return moment.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")

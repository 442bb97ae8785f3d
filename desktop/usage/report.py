"""Usage added up: in all, by source, by local day, by chat; as the JSON `nanobot-tray usage --json` prints and
as CSV. Plain functions over records (desktop/usage/records.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from desktop.kernel.work import Source
from desktop.usage.records import CallRecord


@dataclass
class Totals:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None  # the known prices added up; None when no call in it had one
    estimated: int = 0  # calls whose tokens were estimated (the server reported none)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.prompt_tokens += record.prompt_tokens
        self.completion_tokens += record.completion_tokens
        self.cached_tokens += record.cached_tokens
        if record.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + record.cost_usd
        self.estimated += record.estimated

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cached_tokens": self.cached_tokens,
                "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
                "estimated_calls": self.estimated}


@dataclass
class Summary:
    """Usage from `first` (a local day) to today."""

    first: date
    total: Totals = field(default_factory=Totals)
    by_source: dict[Source, Totals] = field(default_factory=lambda: {s: Totals() for s in Source})
    by_day: dict[date, Totals] = field(default_factory=lambda: defaultdict(Totals))
    by_day_source: dict[tuple[date, Source], Totals] = field(default_factory=lambda: defaultdict(Totals))
    by_session: dict[tuple[Source, str], Totals] = field(default_factory=lambda: defaultdict(Totals))

    def to_json(self) -> dict[str, Any]:
        """The object `usage --json` prints: `total` and `by_source` (every source), each with its own
        `by_day` (local days that had calls)."""
        def with_days(totals: Totals, source: Source | None) -> dict[str, Any]:
            days = (self.by_day.items() if source is None else
                    ((day, t) for (day, s), t in self.by_day_source.items() if s is source))
            return {**totals.to_json(), "by_day": {day.isoformat(): t.to_json() for day, t in sorted(days)}}

        return {"since": self.first.isoformat(), "total": with_days(self.total, None),
                "by_source": {s.value: with_days(t, s) for s, t in self.by_source.items()}}

    def top(self, unattended: bool, count: int = 10) -> list[tuple[Source, str, Totals]]:
        """The chats (typed work) or the jobs (unattended work and consolidation) that used most tokens."""
        rows = [(source, session, totals) for (source, session), totals in self.by_session.items()
                if (source is not Source.CHAT) == unattended]
        rows.sort(key=lambda row: row[2].tokens, reverse=True)
        return rows[:count]


def midnight(day: date) -> float:
    """Local midnight at the start of `day`, in seconds since the epoch."""
    return datetime(day.year, day.month, day.day).timestamp()


def first_day(days: int, today: date | None = None) -> date:
    """The first local day of the last `days` days, today being the last."""
    return (today or date.today()) - timedelta(days=max(1, days) - 1)


def local_day(record: CallRecord) -> date:
    return datetime.fromtimestamp(record.at).date()


def summarize(records: Iterable[CallRecord], first: date) -> Summary:
    summary = Summary(first)
    start = midnight(first)
    for record in records:
        if record.at < start:
            continue
        day = local_day(record)
        summary.total.add(record)
        summary.by_source[record.source].add(record)
        summary.by_day[day].add(record)
        summary.by_day_source[day, record.source].add(record)
        summary.by_session[record.source, record.session].add(record)
    return summary

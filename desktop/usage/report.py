"""Usage added up: in all, by source, by local day, by chat; as the JSON `nanobot-tray usage --json` prints, as
CSV, and in the few words the windows show. Plain functions over records (desktop/usage/records.py)."""

from __future__ import annotations

import csv
import io
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

    def merge(self, other: Totals) -> None:
        self.calls += other.calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
        self.estimated += other.estimated

    def to_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cached_tokens": self.cached_tokens,
                "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
                "estimated_calls": self.estimated}


Group = tuple[date, Source, str]  # a local day, a source, a chat's key ("" for none)


def local_day(at: float, days: dict[int, date]) -> date:
    """The local day of `at`, looked up per quarter hour in `days` (every time zone's offset is whole quarter
    hours): a year of calls costs a few thousand date conversions, not one each."""
    quarter = int(at // 900)
    day = days.get(quarter)
    if day is None:
        day = days[quarter] = datetime.fromtimestamp(quarter * 900).date()
    return day


def add_to(groups: dict[Group, Totals], record: CallRecord, days: dict[int, date]) -> None:
    """Count `record` in its group."""
    _get(groups, (local_day(record.at, days), record.source, record.session)).add(record)


@dataclass
class Summary:
    """Usage from `first` (a local day) to today, kept added up by day and source, by chat or job and by source
    as groups and calls come in: what the window shows is read, not summed, on the GUI thread (a year is several
    thousand groups). The groups themselves are not kept: nothing shows them, and a year's worth of objects made
    at once costs a full garbage collection, a GUI stall whichever thread pays it."""

    first: date
    _days: dict[int, date] = field(default_factory=dict, repr=False)  # local day of each quarter hour seen
    _by_day_source: dict[tuple[date, Source], Totals] = field(default_factory=dict, repr=False)
    _by_session: dict[tuple[Source, str], Totals] = field(default_factory=dict, repr=False)
    _by_source: dict[Source, Totals] = field(default_factory=dict, repr=False)

    def add(self, record: CallRecord) -> None:
        """Count one call (made in the period)."""
        key = (local_day(record.at, self._days), record.source, record.session)
        for totals in self._totals(key):
            totals.add(record)

    def add_group(self, key: Group, group: Totals) -> None:
        """Count one group's calls."""
        for totals in self._totals(key):
            totals.merge(group)

    def _totals(self, key: Group) -> list[Totals]:
        """The sums the group of `key` is part of, made when missing."""
        day, source, session = key
        return [_get(self._by_day_source, (day, source)),
                _get(self._by_session, (source, session)), _get(self._by_source, source)]

    @property
    def total(self) -> Totals:
        total = Totals()
        for totals in self._by_source.values():
            total.merge(totals)
        return total

    @property
    def by_source(self) -> dict[Source, Totals]:
        """Every source, in their order, those without calls too."""
        return {source: self._by_source.get(source, Totals()) for source in Source}

    @property
    def by_day(self) -> dict[date, Totals]:
        out: dict[date, Totals] = defaultdict(Totals)
        for (day, _), totals in self._by_day_source.items():
            out[day].merge(totals)
        return dict(sorted(out.items()))

    @property
    def by_day_source(self) -> dict[tuple[date, Source], Totals]:
        return dict(self._by_day_source)

    def to_json(self) -> dict[str, Any]:
        """The object `usage --json` prints: `total` and `by_source` (every source), each with its own
        `by_day` (local days that had calls)."""
        per_day = self.by_day_source

        def with_days(totals: Totals, source: Source | None) -> dict[str, Any]:
            days = (self.by_day.items() if source is None else
                    ((day, t) for (day, s), t in per_day.items() if s is source))
            return {**totals.to_json(), "by_day": {day.isoformat(): t.to_json() for day, t in sorted(days)}}

        return {"since": self.first.isoformat(), "total": with_days(self.total, None),
                "by_source": {s.value: with_days(t, s) for s, t in self.by_source.items()}}

    def top(self, unattended: bool, count: int = 10) -> list[tuple[Source, str, Totals]]:
        """The chats (typed work) or the jobs (unattended work and consolidation) that used most tokens."""
        rows = [(source, session, totals) for (source, session), totals in self._by_session.items()
                if (source is not Source.CHAT) == unattended]
        rows.sort(key=lambda row: row[2].tokens, reverse=True)
        return rows[:count]


def _get(sums: dict[Any, Totals], key: Any) -> Totals:
    totals = sums.get(key)
    if totals is None:
        totals = sums[key] = Totals()
    return totals


def midnight(day: date) -> float:
    """Local midnight at the start of `day`, in seconds since the epoch."""
    return datetime(day.year, day.month, day.day).timestamp()


def first_day(days: int, today: date | None = None) -> date:
    """The first local day of the last `days` days, today being the last."""
    return (today or date.today()) - timedelta(days=max(1, days) - 1)


CSV_COLUMNS = ("time", "source", "chat", "model", "prompt_tokens", "completion_tokens", "cached_tokens",
               "cost_usd", "estimated")


def to_csv(records: Iterable[CallRecord]) -> str:
    """One row per call, local time, for a spreadsheet."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for r in records:
        writer.writerow([datetime.fromtimestamp(r.at).isoformat(timespec="seconds"), r.source.value, r.session,
                         r.model, r.prompt_tokens, r.completion_tokens, r.cached_tokens,
                         "" if r.cost_usd is None else f"{r.cost_usd:.6f}", "yes" if r.estimated else ""])
    return out.getvalue()


def tokens_text(count: int) -> str:
    """12,345 → "12.3k", 2,500,000 → "2.5M": what fits under a bar, on an axis or in a header."""
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if count >= size:
            return f"{count / size:.1f}".rstrip("0").rstrip(".") + unit
    return str(count)


def brief(tokens: int, cost_usd: float | None) -> str:
    """"12.3k tokens · $0.04", tokens alone when no price is known: a chat's or a task's use at a glance (cents
    once there are some, else the fraction of a cent that is there)."""
    if cost_usd is None:
        return f"{tokens_text(tokens)} tokens"
    return f"{tokens_text(tokens)} tokens · " + (f"${cost_usd:,.2f}" if cost_usd >= 0.01 else f"${cost_usd:.4f}")

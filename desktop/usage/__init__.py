"""Usage and budgets: every model call counted once, from the provider's own numbers, under the work it served;
kept in the data folder; unattended work held to the `budgets` section (desktop/usage/meter.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import date

from desktop.config import Config
from desktop.kernel.host import Feature, Host
from desktop.kernel.notices import Notify
from desktop.kernel.taskset import spawn
from desktop.usage.days import DaySummary
from desktop.usage.meter import UsageMeter
from desktop.usage.records import CallRecord, UsageLog
from desktop.usage.report import Summary
from desktop.usage.settings import SECTION

__all__ = ["FEATURE", "Usage"]


class Usage:
    """The feature's service: the log to read, its per-day summary to add up periods from, the meter to ask
    about today, and word of each call counted."""

    def __init__(self, log: UsageLog, config: Callable[[], Config], notify: Notify) -> None:
        self.log = log
        self.days = DaySummary(log.path)
        self.meter = UsageMeter(log, config, notify, self._counted)
        self._listeners: list[Callable[[CallRecord], None]] = []

    async def summary(self, first: date) -> Summary:
        """Usage from local day `first` on, added up off the event loop from the per-day summary. When there is
        none yet (the first look after an upgrade, or it was lost), the period is read from the log's end and
        the summary is built behind it, for next time."""
        summary = await asyncio.to_thread(self.days.saved, first)
        if summary is None:
            summary = await asyncio.to_thread(self.days.from_log, first)
            spawn(asyncio.to_thread(self.days.summary, first))
        return summary

    def subscribe(self, listener: Callable[[CallRecord], None]) -> Callable[[], None]:
        """Hear each call as it is counted (a window showing usage); returns the way to stop."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _counted(self, record: CallRecord) -> None:
        for listener in list(self._listeners):
            listener(record)


def attach(host: Host) -> Usage:
    """Put the meter on the provider, with today's unattended use read from the file (blocking, like the rest
    of build_core), and tell it each turn's chat; once the turns have ended on close, every call is written."""
    log = UsageLog(host.home.data_dir)
    usage = Usage(log, lambda: host.config, host.notify)
    usage.meter.load_today()
    host.provider.meter = usage.meter
    host.hooks.before_turn.append(usage.meter.turn_began)

    async def close() -> None:
        """After the turns: the calls a turn cut short by Quit was still pricing, then what is queued, written."""
        await usage.meter.settle()
        await log.flush()

    host.on_turns_ended(close)
    return usage


FEATURE = Feature("usage", Usage, attach, settings=SECTION, cli="desktop.usage.command")

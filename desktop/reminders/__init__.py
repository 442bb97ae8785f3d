"""Reminders and scheduled jobs: the `cron` tool, the jobs file, and running each job's message as a turn
in the chat that made it when it comes due (on the core's scheduler)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.reminders.book import Ran, ReminderError, Reminders
from desktop.reminders.jobs import JobStore
from desktop.reminders.tool import CronTool

if TYPE_CHECKING:
    from desktop.core import Core

__all__ = ["Ran", "ReminderError", "Reminders", "attach_reminders"]


def attach_reminders(core: Core) -> Reminders:
    """Load the saved jobs (blocking, like the rest of build_core), offer the `cron` tool and put the jobs
    on the scheduler; a jobs file that could not be read is reported once the core starts."""

    reminders = Reminders(JobStore(core.home.state_dir), core.loop.ask, lambda: core.scheduler.clock,
                          lambda: core.config.schedules.missed_grace, core.sessions.load, core.scheduler.rearm,
                          core.notify)
    reminders.load()
    core.tools.register(CronTool(reminders))
    core.scheduler.add(reminders)

    async def report() -> None:
        if reminders.store.problem:
            core.notify("Reminders file could not be read", reminders.store.problem)

    core.on_start(report)
    core.on_close(reminders.close)
    return reminders

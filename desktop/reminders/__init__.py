"""Reminders and scheduled jobs: the `cron` tool, the jobs file, and running each job's message as a turn
in the chat that made it when it comes due (on the core's scheduler)."""

from __future__ import annotations

from desktop.approvals import Approvals
from desktop.config import value_at
from desktop.kernel.bus import OutboundKind, OutboundMessage
from desktop.kernel.host import Feature, Host
from desktop.reminders.book import Ran, ReminderError, Reminders
from desktop.reminders.jobs import JobStore
from desktop.reminders.tool import CronTool
from desktop.scheduler import Scheduler
from desktop.scheduler.settings import SchedulesConfig
from desktop.usage import Usage

__all__ = ["FEATURE", "Ran", "ReminderError", "Reminders"]


def attach(host: Host) -> Reminders:
    """Load the saved jobs (blocking, like the rest of build_core), offer the `cron` tool and put the jobs
    on the scheduler; a jobs file that could not be read is reported once the core starts."""
    scheduler = host.get(Scheduler)

    async def post(key: str, text: str) -> None:
        """Save `text` as the assistant's in the chat and show it there (a reminder delivered as written)."""
        session = await host.sessions.load(key)
        await host.sessions.append(session, {"role": "assistant", "content": text})
        host.publish(OutboundMessage(key, text, OutboundKind.REMINDER))

    reminders = Reminders(JobStore(host.home.state_dir), host.ask_agent, lambda: scheduler.clock,
                          lambda: host.config.section(SchedulesConfig).missed_grace, host.sessions.load,
                          scheduler.rearm, host.publish, post, host.get(Approvals).unattended,
                          lambda: host.tools.names, lambda: list(value_at(host.config, "mcp.servers")),
                          host.get(Usage).subscribe)
    reminders.load()
    host.tools.register(CronTool(reminders))
    scheduler.add(reminders)

    async def report() -> None:
        if reminders.store.problem:
            host.notify("Reminders file could not be read", reminders.store.problem)

    host.on_start(reminders.start)
    host.on_start(report)
    host.on_close(reminders.quit)
    host.on_turns_ended(reminders.close)  # a turn that ends in the quit's grace is a run made, saved as such
    return reminders


FEATURE = Feature("reminders", Reminders, attach, requires=(Scheduler, Approvals, Usage), cli="desktop.cli.cron_cmd")

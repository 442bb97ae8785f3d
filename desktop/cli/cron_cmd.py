"""`nanobot-tray cron`: the reminders from the command line — list, remove, grant or refuse a job a tool ahead
(`allow` / `deny`: a run has nobody to ask), and run what is due now (for a system timer while the app is not
running). With the app running each runs there, on its jobs."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable

from desktop.cli import INTERRUPTED
from desktop.cli.interrupt import stop_on_interrupt
from desktop.cli.remote import Output, Terminal, add_standalone
from desktop.core import Core
from desktop.kernel.bus import TurnError
from desktop.reminders import Reminders
from desktop.scheduler import Scheduler

JOB_ID = "the job's id, as `nanobot-tray cron list` shows it (first on its line)"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("cron", help="list and remove reminders, decide their tools ahead, or run the ones due "
                                         "now")
    cron = parser.add_subparsers(dest="cron_command", metavar="ACTION", required=True)
    for name, text in (("list", "show every job: id, label, schedule, next run (local time), chat"),
                       ("run-due", "run the jobs that are due now, print their answers, and exit")):
        add_standalone(cron.add_parser(name, help=text))
    remove = cron.add_parser("remove", help="delete one job by its id")
    remove.add_argument("id", help=JOB_ID)
    add_standalone(remove)
    for name, text in (("allow", "let a job use a tool without asking (exec, web_fetch, mcp:SERVER for one MCP "
                                  "server's tools)"),
                       ("deny", "never let a job use a tool, even one that needs no asking")):
        grant = cron.add_parser(name, help=text)
        grant.add_argument("id", help=JOB_ID)
        grant.add_argument("tool", help="a tool's name (exec, web_fetch...) or mcp:SERVER for one MCP "
                                         "server's tools")
        add_standalone(grant)
    parser.set_defaults(func=run, serve=serve)


def serve(args: argparse.Namespace, core: Core, out: Output) -> Awaitable[int]:
    """In the running app: its own jobs, so the app and the command never write the file over each other."""
    return _command(args, core, out)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main(args))


async def _main(args: argparse.Namespace) -> int:
    from desktop.core import build_core

    core = await asyncio.to_thread(build_core)
    for problem in core.settings.problems:
        print(f"config: {problem}", file=sys.stderr)
    if core.get(Reminders).store.problem:
        print(f"error: {core.get(Reminders).store.problem}", file=sys.stderr)
    if args.cron_command != "run-due":
        return await _command(args, core, Terminal())
    if not core.config.model and core.get(Reminders).next_run() is not None:
        print(f"error: no model is configured; set `model` in {core.home.config_file}", file=sys.stderr)
        return 2
    with core.get(Reminders).store.sole_runner() as alone:
        if not alone:
            print("Nothing was run: another `nanobot-tray cron run-due` is still running the jobs that were due.")
            return 0
        return await _run_due(args, core)


async def _run_due(args: argparse.Namespace, core: Core) -> int:
    from desktop.cli.mcp_cmd import print_startup_waits

    core.get(Scheduler).timer = None  # only this command runs jobs here: none starts behind its back
    print_startup_waits(core)
    await core.start()
    try:
        with stop_on_interrupt(core, lambda: core.loop.busy_sessions) as interrupted:
            code = await _command(args, core, Terminal())
        return INTERRUPTED if interrupted.pressed else code
    finally:
        await core.close()


async def _command(args: argparse.Namespace, core: Core, out: Output) -> int:
    from desktop.approvals.ahead import GrantError
    from desktop.reminders import ReminderError
    from desktop.reminders.book import unanswered_text, wanted_text
    from desktop.reminders.tool import job_line

    reminders = core.get(Reminders)
    if args.cron_command == "list":
        titles = {info.key: info.title for info in await core.sessions.list() if info.title != info.key}
        for job in reminders.jobs:
            out.out(job_line(job, titles=titles))
        if not reminders.jobs:
            out.out("No scheduled jobs.")
        return 0
    if args.cron_command == "remove":
        try:
            job = await reminders.remove(args.id)
        except ReminderError as exc:
            out.err(f"error: {exc}")
            return 1
        out.out(f"Removed {job.id} “{job.label}”.")
        return 0
    if args.cron_command in ("allow", "deny"):
        try:
            job = await reminders.set_grant(args.id, args.tool, args.cron_command)
        except (ReminderError, GrantError) as exc:
            out.err(f"error: {exc}")
            return 1
        out.out(job_line(job))
        return 0
    ran = await reminders.run_due()
    if not ran:
        out.out("Nothing is due.")
    for job, end in ((r.job, r.end) for r in ran):
        # a failed run still delivers the reminder, as written, as the app does; so does one stopped here with
        # Ctrl+C, which a one-shot reminder does not come back from
        if isinstance(end, TurnError):
            text = unanswered_text(job, end.message)
        elif end.stopped:
            text = f"{job.message}\n\n(Stopped before the assistant answered: the reminder as it was written.)"
        else:
            text = end.content
        out.out(f"{job.id} “{job.label}” ({job.session}):\n{text}")
        if job.wanted:
            out.err(f"note: {job.id} {wanted_text(job)}")
    return 1 if any(isinstance(r.end, TurnError) for r in ran) else 0

"""The `cron` tool: the model schedules, lists and removes reminders for the chat it is in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.reminders.book import ReminderError, Reminders, job_label, local
from desktop.reminders.jobs import Job
from desktop.reminders.parse import parse_schedule
from desktop.reminders.runs import outcome_words
from desktop.reminders.when import day_and_time, soon
from desktop.scheduler.schedules import At, ScheduleError, describe
from desktop.tools.base import Tool, ToolContext, ToolError, ToolOutput
from desktop.usage.report import brief


def job_line(job: Job, here: str = "", titles: Mapping[str, str] | None = None) -> str:
    """One job as `list` shows it: id, label, schedule, next run (local time), chat (by its title where `titles`
    knows it, as people know their chats; else by its key)."""
    if job.missed is not None:
        when = f"missed (was due {local(job.missed)})"
    elif job.paused:
        when = "paused"
    elif job.next_run is not None:
        when = f"next {local(job.next_run)}"
    else:
        when = "no more runs"
    title = (titles or {}).get(job.session)
    chat = "this chat" if job.session == here else f"chat “{title}”" if title else f"chat {job.session}"
    granted = "".join(f" · {verb} {', '.join(names)}" for verb, names in grants_in_words(job))
    return f"{job.id} · “{job.label}” · {describe(job.schedule)} · {when} · {chat}{granted}{last_run(job)}"


def last_run(job: Job) -> str:
    """How its last run went, with what it used (a job saved before runs were kept says only why it failed)."""
    if not job.runs:
        return f" · last run failed: {job.last_error}" if job.last_error else ""
    run = job.runs[-1]
    used = f" ({brief(run.tokens, run.cost_usd)})" if run.tokens else ""
    return f" · last run {local(run.at)}: {outcome_words(run)}{used}"


def grants_in_words(job: Job) -> list[tuple[str, list[str]]]:
    """Its grants as ("may use", names) and ("never uses", names), each only when there are some."""
    allowed = [name for name, grant in job.grants.items() if grant == "allow"]
    denied = [name for name, grant in job.grants.items() if grant == "deny"]
    return [(verb, names) for verb, names in (("may use", allowed), ("never uses", denied)) if names]


class CronTool(Tool):
    name = "cron"
    in_background = False  # reminders are set from a chat a person is in
    description = (
        "Schedule reminders and timed tasks for this chat, list them, or remove one. When a job is due, its "
        "message is sent to this chat as a new turn and your answer is shown to the user as a notification, "
        "so write the message as a complete instruction. add needs 'message' and exactly one of: 'in' "
        "(seconds from now, for 'in 20 minutes'), 'at' (one ISO time; without an offset it is the user's "
        "local time), 'every' (repeat every N seconds, at least 60) or 'cron' (5-field expression, with "
        "optional 'tz')."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["add", "list", "remove"]},
            "message": {"type": "string",
                        "description": "add: what to do when due, self-contained (it runs without this "
                                       "conversation in view), e.g. 'Remind the user to call the dentist'."},
            "label": {"type": "string", "description": "add: a short name for lists and notifications."},
            "in": {"type": "integer", "description": "add: once, this many seconds from now."},
            "at": {"type": "string",
                   "description": "add: once, at this ISO 8601 time, e.g. 2026-03-14T15:00 (local time) or "
                                  "2026-03-14T15:00:00+01:00."},
            "every": {"type": "integer", "description": "add: repeat every this many seconds (at least 60)."},
            "cron": {"type": "string",
                     "description": "add: a cron expression 'minute hour day month weekday', e.g. "
                                    "'0 9 * * 1-5' for weekdays at 9:00."},
            "tz": {"type": "string",
                   "description": "add with 'cron' or 'at': an IANA timezone such as Europe/Paris "
                                  "(default: the user's own)."},
            "id": {"type": "string", "description": "remove: the job's id, as list shows it."},
        },
        "required": ["action"],
        "additionalProperties": False,
    }

    def __init__(self, reminders: Reminders) -> None:
        self.reminders = reminders

    def described(self, arguments: dict[str, Any]) -> str:
        """The reminder by its name and when it runs ("Stretch · in 40 s"), never its id or the action's name."""
        action = arguments.get("action")
        if action == "add":
            name = job_label(str(arguments.get("label") or ""), str(arguments.get("message") or ""))
            return " · ".join(part for part in (name, self._when(arguments)) if part)
        if action == "remove":
            job = next((j for j in self.reminders.jobs if j.id == str(arguments.get("id", "")).strip()), None)
            return f"cancel “{job.label}”" if job is not None else "cancel a reminder"
        return "all reminders" if action == "list" else ""

    def _when(self, arguments: dict[str, Any]) -> str:
        now = self.reminders.now()
        try:
            schedule = parse_schedule(arguments, now)
        except (ScheduleError, ArithmeticError):  # an 'in' past the calendar's end overflows
            return ""  # the call fails and says why; the card names the reminder alone
        if isinstance(schedule, At):
            wait = (schedule.when - now).total_seconds()
            return soon(round(wait)) if arguments.get("in") not in (None, "") else day_and_time(schedule.when, now)
        return describe(schedule)

    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        action = args.pop("action")
        if action == "list":
            jobs = self.reminders.jobs
            if not jobs:
                return "No scheduled jobs."
            return "\n".join(job_line(job, ctx.session_key) for job in jobs)
        if action == "remove":
            if not args.get("id"):
                raise ToolError("remove needs 'id' (see list)")
            try:
                job = await self.reminders.remove(str(args["id"]))
            except ReminderError as exc:
                raise ToolError(str(exc)) from None
            return f"Removed {job.id} “{job.label}”."
        return await self._add(ctx, args)

    async def _add(self, ctx: ToolContext, args: dict[str, Any]) -> str:
        message = str(args.get("message") or "").strip()
        if not message:
            raise ToolError("add needs 'message': what to do when the job is due")
        try:
            schedule = parse_schedule(args, self.reminders.now())
        except ScheduleError as exc:
            raise ToolError(str(exc)) from None
        job = await self.reminders.add(ctx.session_key, schedule, message, str(args.get("label") or ""))
        assert job.next_run is not None
        return (f"Scheduled {job.id} “{job.label}”: {describe(job.schedule)}, next run "
                f"{local(job.next_run)} (user's local time). It will run in this chat.")

"""The reminders in force: one scheduler entry whose next run is the earliest job's. When jobs come due,
each one's message runs as a turn in the chat that made it and the answer is notified.

Late runs (the app was closed, the machine slept): a job less than `schedules.missed_grace` late runs
once; later than that a one-shot is marked missed and the user is told (once: the mark is saved), and a
recurring job moves on to its next slot. Either way at most one run per job, never a burst.

A job whose turn runs stays in the file as due when it came due until that turn has ended (a one-shot, which
leaves the list as its turn starts, too; and a run the person asked for, Run now or Allow and run again, as due
when asked): quitting meanwhile leaves that run to be made (or said missed) at the next start, never gone without
a word.

Each job keeps its last runs (desktop/reminders/runs.py): how each ended, with the tokens and cost of the model
calls counted for it (the calls in its chat under its own message, so a typed turn or another reminder of the
same chat is not added in), and each run it missed, with why."""

from __future__ import annotations

import asyncio
import logging
import secrets
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import datetime

from desktop.approvals.ahead import Grant, GrantError, UnattendedRuns, grant_name
from desktop.kernel.bus import Ask, MessageKind, TurnError, TurnFinished
from desktop.kernel.notices import Notice, OpenChat, Target, at_newest, plain_text
from desktop.kernel.taskset import TaskSet
from desktop.kernel.work import Source
from desktop.reminders.jobs import Job, JobStore, as_data
from desktop.reminders.runs import Outcome, Run, kept
from desktop.reminders.when import day_and_time
from desktop.scheduler.clock import Clock
from desktop.scheduler.schedules import At, Schedule, next_run
from desktop.session.session import Session
from desktop.usage.meter import stopped_by_budget
from desktop.usage.records import CallRecord

log = logging.getLogger(__name__)
LABEL_CHARS = 40  # a label made from the message when none is given
SAVE_WITHIN = 3.0  # seconds quitting waits for the jobs file to be saved (the core gives each feature 5 in all)
AGAIN = ("again", "Allow and run again")  # the action of a notice about a run that lacked a grant
Calls = Callable[[Callable[[CallRecord], None]], Callable[[], None]]  # hear each model call counted; returns stop


@dataclass(frozen=True)
class Ran:
    """One job's run: the job as it was when it came due, and how its turn ended."""

    job: Job
    end: TurnFinished | TurnError


class ReminderError(LookupError):
    """No such job; the message says which."""


def turn_text(job: Job) -> str:
    """What the chat receives when a job comes due. Its first line is also the chat's divider above the answer,
    so it names the job as a person knows it and when it runs next (a day and a time: it is read again after
    a restart); the model learns the job's id, then the instruction as written when it was made."""
    again = job.next_run is not None and not job.paused and not isinstance(job.schedule, At)
    upcoming = f" · next {day_and_time(job.next_run)}" if again and job.next_run is not None else ""
    return (f"[Reminder “{job.label}” came due{upcoming}]\nScheduled job {job.id}, as written when it was "
            f"made:\n{job.message}")


def chat_title(job: Job) -> str:
    """What a chat is called that the job's run begins (nobody had typed in it, or /new emptied it since)."""
    return f"Reminder: {job.label}"


def notice_title(chat: str, job: Job) -> str:
    """A run's notice names its chat and the job; the job once in a chat it named itself."""
    return chat if chat == chat_title(job) else f"{chat}: {job.label}"


def job_label(label: str, message: str) -> str:
    """A job's name: the one given, else the start of its message, on one line."""
    named = " ".join((label or message).split())
    return named[:LABEL_CHARS - 1] + "…" if len(named) > LABEL_CHARS else named


def unanswered_text(job: Job, reason: str) -> str:
    """What the chat shows when a job's turn failed: the reminder as it was written, and why no one answered
    (a reminder must not be lost because the model was down)."""
    return (f"{job.message}\n\n*Reminder “{job.label}” as it was written: the assistant could not be reached "
            f"({reason}).*")


def wanted_text(job: Job) -> str:
    """What a run lacked, in words for its notice, the window and the command line."""
    command = f"nanobot-tray cron allow {job.id} {shlex.quote(job.wanted[0])}"  # a server may be "My Notes"
    return (f"It wanted to use {', '.join(job.wanted)} without asking, which this reminder may not "
            f"(allow it in the Reminders window or with `{command}`).")


def run_of(end: TurnFinished | TurnError, wanted: list[str], at: datetime, calls: list[CallRecord]) -> Run:
    """What one run did, for its job's history: how it ended and what `calls` (its model calls) used."""
    if isinstance(end, TurnError):
        outcome = Outcome.BUDGET if stopped_by_budget(end.kind, end.message) else Outcome.FAILED
        reason = end.message
    elif end.stopped:
        outcome, reason = Outcome.STOPPED, "its chat was stopped"
    elif wanted:
        outcome, reason = Outcome.WANTED, ", ".join(wanted)
    else:
        outcome, reason = Outcome.ANSWERED, ""
    costs = [call.cost_usd for call in calls if call.cost_usd is not None]
    return Run(at, outcome, reason, sum(call.tokens for call in calls), sum(costs) if costs else None)


def asked_at(messages: list[dict[str, object]], text: str) -> int:
    """Where a run's message is in its chat (the calls counted under it are the run's); -1 when it is not there
    (the conversation moved away with /new)."""
    return next((i for i in range(len(messages) - 1, -1, -1)
                 if messages[i].get("role") == "user" and messages[i].get("content") == text), -1)


def local(moment: datetime) -> str:
    """A run time in this computer's time zone, as a person reads it."""
    return moment.astimezone().strftime("%a %Y-%m-%d %H:%M %Z")


class Reminders:
    name = "reminders"

    def __init__(self, store: JobStore, ask: Ask, clock: Callable[[], Clock], grace: Callable[[], float],
                 session_of: Callable[[str], Awaitable[Session]], rearm: Callable[[], None],
                 tell: Callable[[Notice], None], post: Callable[[str, str], Awaitable[None]],
                 unattended: UnattendedRuns, tools: Callable[[], list[str]], servers: Callable[[], list[str]],
                 calls: Calls) -> None:
        """`tell` publishes a notice; `post(session key, text)` saves a message in a chat and shows it there
        (outside any turn); `unattended` is where a run's grants are found by approvals; `tools()` names the
        tools there are and `servers()` the MCP servers set up, connected or not (a grant for another is a
        typo); `calls` hears the model calls as they are counted."""
        self.store = store
        self.jobs: list[Job] = []
        self._ask = ask
        self._clock = clock
        self._grace = grace
        self._session_of = session_of
        self._rearm = rearm
        self._tell = tell
        self._post = post
        self._unattended = unattended
        self._tools = tools
        self._servers = servers
        self._calls = calls
        self.started: datetime | None = None  # when this run of the app began taking jobs: earlier, it was closed
        self._lock = asyncio.Lock()
        self._runs = TaskSet("reminders")
        self._saves = TaskSet("reminders' saves")  # never cancelled: quitting waits for them (SAVE_WITHIN)
        # Jobs whose runs' turns go on, by id: when each came due (or was asked for); the file says the earliest until
        # the last has ended, so a run ending never clears the mark another run of the job (Run now) still needs.
        self._unfinished: dict[str, list[datetime]] = {}
        self._one_shots: dict[str, Job] = {}  # one-shots whose turn runs: out of `jobs`, still in the file
        self._listeners: list[Callable[[], None]] = []
        self._quitting = False  # the app quits: a turn stopped now was cut short, not stopped by the person

    def load(self) -> None:
        """Read the saved jobs. Blocking (build time)."""
        self.jobs = self.store.load()

    async def start(self) -> None:
        """The app is running from now on: a job due before now that is missed was missed while it was closed."""
        self.started = self.now()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Hear that the jobs changed (a window listing them)."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def now(self) -> datetime:
        return self._clock().now()

    # ----- the scheduler's entry
    def next_run(self) -> datetime | None:
        runs = [job.next_run for job in self.jobs if job.next_run is not None and not job.paused]
        return min(runs, default=None)

    async def fire(self, now: datetime, busy: bool) -> None:
        """Start what is due (reminders run whether or not another chat is busy: the turn gate queues them)."""
        self._start_due(now)
        await self._changed()

    async def run_due(self) -> list[Ran]:
        """Run what is due now and wait for the answers (the CLI's `cron run-due`)."""
        started = self._start_due(self.now())
        await self._changed()
        return list(await asyncio.gather(*started))

    def _start_due(self, now: datetime) -> list[asyncio.Future[Ran]]:
        started = []
        for job in list(self.jobs):
            due = job.next_run
            if due is None or job.paused or due > now:
                continue
            job.next_run = next_run(job.schedule, now)  # strictly after now: at most one run
            if (now - due).total_seconds() > self._grace():
                self._missed(job, due)
                continue
            if isinstance(job.schedule, At):
                self._take_out(job)
            self._unfinished.setdefault(job.id, []).append(due)
            started.append(self._runs.spawn(self._run(job, now, due)))
        return started

    def _take_out(self, job: Job) -> None:
        """A one-shot whose turn starts leaves the list (the chat keeps what it said); the file keeps it until the
        turn ends (`_run`)."""
        self.jobs.remove(job)
        self._one_shots[job.id] = job

    def _as_saved(self) -> list[Job]:
        """The jobs as the file keeps them: one whose run goes on is due there when it (the earliest) was due."""
        jobs = [*self.jobs, *self._one_shots.values()]
        return [replace(job, next_run=min(self._unfinished[job.id])) if job.id in self._unfinished else job
                for job in jobs]

    def _missed(self, job: Job, due: datetime) -> None:
        asleep = self.started is not None and due >= self.started  # the app ran, yet its timer came late
        why = "the computer was asleep" if asleep else "the app was closed"
        job.runs = kept(job.runs, Run(due, Outcome.MISSED, why))
        if not isinstance(job.schedule, At):
            log.info("job %s skipped its run due %s (too late); next %s", job.id, due, job.next_run)
            return
        job.missed = due
        log.info("job %s missed its run due %s", job.id, due)
        self._tell(Notice("Reminder missed", f"“{job.label}” was due {local(due)}, while {why}, so it did not run.",
                          OpenChat(job.session)))

    async def _run(self, job: Job, now: datetime, due: datetime) -> Ran:
        how = f"they can allow it for this job in the Reminders window or with `nanobot-tray cron allow {job.id}`"
        text = turn_text(job)
        heard: list[CallRecord] = []
        stop = self._calls(lambda call: heard.append(call) if call.session == job.session else None)
        try:
            with self._unattended.running(job.session, job.grants, how) as run:
                end = await self._ask(job.session, text, kind=MessageKind.SCHEDULED, title=chat_title(job))
        finally:
            stop()
        if self._quitting and isinstance(end, TurnFinished) and end.stopped:
            return Ran(job, end)  # cut short by the quit: due in the file still, made at the next start
        marks = self._unfinished[job.id]
        marks.remove(due)  # its turn ended: the file moves on too, unless another run of the job goes on
        if not marks:
            self._unfinished.pop(job.id, None)
        ended_one_shot = not marks and self._one_shots.pop(job.id, None) is not None
        asked = asked_at((await self._session_of(job.session)).messages, text)
        mine = [call for call in heard if (call.question == asked if asked >= 0 else call.source is Source.REMINDER)]
        job.wanted = run.wanted
        job.last_run = now
        job.last_error = end.message if isinstance(end, TurnError) else ""
        job.runs = kept(job.runs, run_of(end, run.wanted, now, mine))
        if job in self.jobs or ended_one_shot:
            await self._changed()
        if isinstance(end, TurnError):
            await self._post(job.session, unanswered_text(job, end.message))
        session = await self._session_of(job.session)  # its answer (or the reminder as written) is the newest message
        if isinstance(end, TurnError):
            self._notice(job, notice_title(session.title, job), f"{plain_text(job.message)} (The assistant could "
                         f"not be reached: {plain_text(end.message)})", at_newest(session))
        elif not end.stopped:
            self._notice(job, notice_title(session.title, job), plain_text(end.content) or "(empty reply)",
                         at_newest(session))
        return Ran(job, end)

    def _notice(self, job: Job, title: str, body: str, target: Target) -> None:
        """A run's notice; when it lacked a grant, it says which and offers to allow it and run again."""
        if not job.wanted:
            self._tell(Notice(title, body, target))
            return
        wanted = list(job.wanted)

        def again(_action: str) -> None:
            self.allow_and_rerun(job, wanted)

        self._tell(Notice(title, f"{body}\n{wanted_text(job)}", target, (AGAIN,), again))

    def allow_and_rerun(self, job: Job, wanted: list[str]) -> asyncio.Future[Ran]:
        """"Allow and run again": grant what its run wanted, then run it again now (a one-shot that is done
        runs once more as it was; a job still scheduled keeps its grants; one the person deleted since runs once
        and stays deleted)."""
        job.grants.update(dict.fromkeys(wanted, "allow"))
        if job not in self.jobs and isinstance(job.schedule, At):
            self._one_shots[job.id] = job  # a one-shot that is done: in the file again until this run ends
        return self._run_out_of_turn(job)

    async def set_grant(self, job_id: str, tool: str, grant: Grant | None) -> Job:
        """Let a job use a tool without asking (`allow`), never (`deny`), or as its policy says (None: a call
        that would ask fails). Raises ReminderError for an unknown job, GrantError for a bad name."""
        job = self.get(job_id)
        grants = {name: given for name, given in job.grants.items() if name != tool.strip()}
        return await self.set_grants(job_id, grants if grant is None else {**grants, tool: grant})

    async def set_grants(self, job_id: str, grants: dict[str, Grant]) -> Job:
        """Replace a job's grants, all or none: a bad or unknown name raises GrantError and changes nothing."""
        job = self.get(job_id)
        job.grants = self.checked_grants(job, grants)
        await self._changed()
        return job

    def checked_grants(self, job: Job, grants: dict[str, Grant]) -> dict[str, Grant]:
        """The grants with their names checked; GrantError names the first that no tool, or no MCP server set
        up, has (it would be saved and grant nothing). A name the job holds already is kept as it is, so a
        server removed since does not keep the person from changing the job's other grants."""
        checked = {grant_name(name): grant for name, grant in grants.items()}
        new = [name for name in checked if name not in job.grants]
        unknown = [name for name in new if not name.startswith("mcp:") and name not in self._tools()]
        if unknown:
            raise GrantError(f"there is no tool '{unknown[0]}' (tools: {', '.join(sorted(self._tools()))}; "
                             "mcp:SERVER for the tools of one MCP server)")
        servers = sorted(self._servers())
        absent = [name.removeprefix("mcp:") for name in new
                  if name.startswith("mcp:") and name.removeprefix("mcp:") not in servers]
        if absent:
            there = (f"servers: {', '.join(servers)}" if servers else
                     "no MCP server is set up: add one on Settings' MCP servers page or under mcp.servers "
                     "in config.yaml")
            raise GrantError(f"there is no MCP server '{absent[0]}' ({there})")
        return checked

    # ----- changes
    async def add(self, session: str, schedule: Schedule, message: str, label: str = "") -> Job:
        now = self.now()
        taken = {job.id for job in self.jobs}
        job_id = next(i for i in iter(lambda: secrets.token_hex(3), "") if i not in taken)
        job = Job(job_id, session, message.strip(), job_label(label, message), schedule, now,
                  next_run(schedule, now))
        self.jobs.append(job)
        await self._changed()
        return job

    def get(self, job_id: str) -> Job:
        for job in self.jobs:
            if job.id == job_id.strip():
                return job
        known = ", ".join(job.id for job in self.jobs) or "none"
        raise ReminderError(f"no scheduled job with id '{job_id}' (ids: {known})")

    async def remove(self, job_id: str) -> Job:
        job = self.get(job_id)
        self.jobs.remove(job)
        await self._changed()
        return job

    async def set_paused(self, job_id: str, paused: bool) -> Job:
        """Pause, or resume from now on (runs that fell in the pause are not made up)."""
        job = self.get(job_id)
        job.paused = paused
        if not paused and job.missed is None:
            job.next_run = next_run(job.schedule, self.now())
            if job.next_run is None and isinstance(job.schedule, At):
                job.missed = job.schedule.when  # its time passed during the pause
                job.runs = kept(job.runs, Run(job.missed, Outcome.MISSED, "it was paused"))
        await self._changed()
        return job

    def run_now(self, job_id: str) -> asyncio.Future[Ran]:
        """Run a job's message now, out of turn; its schedule stays as it was (a one-shot is then done)."""
        job = self.get(job_id)
        if isinstance(job.schedule, At):
            self._take_out(job)
        return self._run_out_of_turn(job)

    def _run_out_of_turn(self, job: Job) -> asyncio.Future[Ran]:
        """Run a job now, asked for by the person: like a scheduled run, due in the file until its turn ends, so a
        run quitting cut short is made at the next start instead of never."""
        now = self.now()
        self._unfinished.setdefault(job.id, []).append(now)
        self._saves.spawn(self._changed())
        return self._runs.spawn(self._run(job, now, now))

    async def quit(self) -> None:
        """The app begins to quit (before its turns are let finish): a run whose turn is stopped from now on was
        cut short."""
        self._quitting = True

    async def close(self) -> None:
        """Once every turn has ended: a run whose turn ended answered saves that (else the next start would make it
        again), one cut short stays due in the file; then the saves begun are waited for."""
        self._quitting = True
        await self._runs.settle(1.0)
        await self._runs.cancel_all(grace=0.5)
        await self._saves.settle(SAVE_WITHIN)

    async def _changed(self) -> None:
        """Re-arm the timer, tell listeners and save; then take in what another process saved meanwhile (a
        command run while the app is closed: each has its own copy of the jobs). The jobs to save are taken
        here, on the loop, one save at a time, so saves land in order and each starts from the last one's."""
        self._tell_changed()
        async with self._lock:
            wrote = as_data(self._as_saved())
            saved = await asyncio.to_thread(self.store.save, wrote)
            if self._adopt(wrote, saved):
                self._tell_changed()

    def _tell_changed(self) -> None:
        self._rearm()
        for listener in list(self._listeners):
            listener()

    def _adopt(self, wrote: dict[str, dict[str, object]], saved: list[Job]) -> bool:
        """Take in the jobs `saved` where they differ from what this process `wrote` (another process's changes):
        its new jobs, the ones it removed, and each field it changed, unless this process changed that field again
        while saving. The file keeps a job whose run goes on due as it came due; this process keeps its next run
        (a field it holds otherwise than written, so never replaced). True when anything was taken in."""
        here = {job.id: job for job in [*self.jobs, *self._one_shots.values()]}
        there = {job.id: job for job in saved}
        gone = [job for job_id, job in here.items() if job_id in wrote and job_id not in there]
        for job in gone:
            self.jobs[:] = [kept_job for kept_job in self.jobs if kept_job is not job]
            self._one_shots.pop(job.id, None)
        added = [job for job_id, job in there.items() if job_id not in wrote and job_id not in here]
        self.jobs.extend(added)
        changed = False
        for job_id, theirs in there.items():
            if job_id not in wrote or job_id not in here:
                continue
            new = as_data([theirs])[job_id]
            if new == wrote[job_id]:
                continue
            ours = here[job_id]
            now = as_data([ours])[job_id]
            for key, value in new.items():
                if value != wrote[job_id][key] and now[key] == wrote[job_id][key]:
                    setattr(ours, key, getattr(theirs, key))
                    changed = True
        return bool(gone or added or changed)

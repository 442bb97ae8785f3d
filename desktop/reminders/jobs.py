"""Reminder jobs and the file that keeps them across restarts (`<data>/state/cron_jobs.json`).

The file is rewritten whole and atomically on every change. Each process that keeps reminders (the app, or
without it each command: a system timer's `cron run-due`, `cron allow`, `agent`) has its own copy of them; a save
takes a lock, reads the file again and puts only what this process changed onto what is there (`merged`), so
what another process saved meanwhile is kept. Reading needs no lock: the file is replaced whole.

One that cannot be read, or holds a job that cannot (whose good jobs are kept), is copied aside
(`cron_jobs.json.corrupt-<time>`; moved, when it cannot be opened at all) and reported, never silently replaced:
the user's jobs may still be recoverable by hand."""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.approvals.ahead import Grant
from desktop.kernel.atomic import atomic_write_text
from desktop.reminders.runs import Run, runs_from_json
from desktop.scheduler.schedules import At, Cron, Every, Schedule

log = logging.getLogger(__name__)
FILE_NAME = "cron_jobs.json"
RUNNING_NAME = f"{FILE_NAME}.running"  # held by the process running due jobs (`sole_runner`)
LOCK_NAME = f"{FILE_NAME}.lock"  # next to the file, in the app's state folder: saves from two processes take turns
VERSION = 1


@dataclass
class Job:
    """One reminder: what to ask (`message`) in which chat (`session`), on which schedule."""

    id: str
    session: str  # the chat that created it: its turn runs there when due
    message: str
    label: str
    schedule: Schedule
    created: datetime
    next_run: datetime | None  # None: nothing more to run (paused, missed, or finished)
    paused: bool = False
    missed: datetime | None = None  # a one-shot that came due too long ago: when it was due
    last_run: datetime | None = None
    last_error: str = ""  # why the last run failed; "" when it answered
    # What it may use without asking, or never, decided ahead (a run has nobody to ask): tool or mcp:SERVER.
    grants: dict[str, Grant] = field(default_factory=dict)
    wanted: list[str] = field(default_factory=list)  # what its last run would have asked for: it had no grant
    runs: list[Run] = field(default_factory=list)  # its last runs and missed runs, oldest first


def schedule_to_json(schedule: Schedule) -> dict[str, Any]:
    if isinstance(schedule, At):
        return {"at": schedule.when.isoformat()}
    if isinstance(schedule, Every):
        return {"every": schedule.seconds, "anchor": schedule.anchor.isoformat()}
    return {"cron": schedule.expr, "tz": schedule.tz}


def schedule_from_json(data: dict[str, Any]) -> Schedule:
    if "at" in data:
        return At(_time(data["at"]))
    if "every" in data:
        return Every(int(data["every"]), _time(data["anchor"]))
    return Cron(str(data["cron"]), str(data["tz"]))


def job_to_json(job: Job) -> dict[str, Any]:
    return {"id": job.id, "session": job.session, "message": job.message, "label": job.label,
            "schedule": schedule_to_json(job.schedule), "created": job.created.isoformat(),
            "next_run": _iso(job.next_run), "paused": job.paused, "missed": _iso(job.missed),
            "last_run": _iso(job.last_run), "last_error": job.last_error, "grants": job.grants,
            "wanted": job.wanted, "runs": [run.to_json() for run in job.runs]}


def job_from_json(data: dict[str, Any]) -> Job:
    return Job(id=str(data["id"]), session=str(data["session"]), message=str(data["message"]),
               label=str(data.get("label") or ""), schedule=schedule_from_json(data["schedule"]),
               created=_time(data["created"]), next_run=_maybe_time(data.get("next_run")),
               paused=bool(data.get("paused", False)), missed=_maybe_time(data.get("missed")),
               last_run=_maybe_time(data.get("last_run")), last_error=str(data.get("last_error") or ""),
               grants={str(k): v for k, v in (data.get("grants") or {}).items() if v in ("allow", "deny")},
               wanted=[str(w) for w in data.get("wanted") or []], runs=runs_from_json(data.get("runs")))


class JobStore:
    """Reads and writes the jobs file. `problem` says what was wrong with it when last read."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE_NAME
        self.problem = ""
        self._read: dict[str, dict[str, Any]] = {}  # each job as this process last read or saved it, by id

    def load(self) -> list[Job]:
        """The saved jobs; a missing file is none. Blocking."""
        jobs = self._parsed() or []
        self._read = as_data(jobs)
        return jobs

    def save(self, jobs: dict[str, dict[str, Any]]) -> list[Job]:
        """Save this process's jobs (`as_data`) without losing what another process saved since this one last read
        or saved the file: under the lock, the file as it is now, with this process's changes put onto it
        (`merged`). Returns the jobs saved, to be adopted. A file that cannot be read now is set aside as `load`
        does, and this process's jobs are saved whole. Blocking: call through a thread."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _flocked(self.path.with_name(LOCK_NAME), wait=True):  # saves in every process take turns
            there = self._parsed()
            saved = [job_from_json(item) for item in
                     merged(self._read, jobs, self._read if there is None else as_data(there))]
            self.write(render(saved))
        self._read = as_data(saved)
        return saved

    def write(self, text: str) -> None:
        """Write the file's text (`render(jobs)`) as it is, over whatever is there. Blocking."""
        atomic_write_text(self.path, text)

    @contextlib.contextmanager
    def sole_runner(self) -> Iterator[bool]:
        """Whether this process is the only one running due jobs, held until the block ends. A job whose run goes
        on stays due in the file until it ends (so a quit does not lose it): a second `cron run-due` meanwhile (a
        system timer's next minute while a run still waits for the model) would run it again."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _flocked(self.path.with_name(RUNNING_NAME), wait=False) as alone:
            yield alone

    def _parsed(self) -> list[Job] | None:
        """The jobs in the file; None when it could not be read at all (it was set aside)."""
        try:
            raw = self.path.read_bytes()  # decoded by json.loads: bytes that are not UTF-8 are set aside below
        except FileNotFoundError:
            return []
        except OSError as exc:  # no permission (copied back as root), a folder in its place: unreadable whole
            self._set_aside(exc.strerror or str(exc), move=True)
            return None
        try:
            data = json.loads(raw)
        except ValueError as exc:  # not JSON, or bytes that are not UTF-8: where it broke
            self._set_aside(f"{type(exc).__name__}: {exc}")
            return None
        items = data.get("jobs") if isinstance(data, dict) else None
        if not isinstance(items, list):  # JSON, but not this file's: `[]`, or jobs as another type
            self._set_aside("it is JSON but holds no list of jobs under \"jobs\"")
            return None
        jobs: list[Job] = []
        bad: list[str] = []
        for number, item in enumerate(items, 1):
            try:
                jobs.append(job_from_json(item))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                bad.append(f"job {number}: {type(exc).__name__}: {exc}")
        if bad:  # one job broken by hand must not take the others with it
            self._set_aside("; ".join(bad[:3]), kept=len(jobs))
        return jobs

    def _set_aside(self, why: str, kept: int = 0, *, move: bool = False) -> None:
        """Copy the file aside before anything rewrites it, and say so; `kept`: the jobs that could be read.
        `move`: one that cannot be read at all is renamed aside instead (a copy would need to read it): left in
        place, the next reminder saved would replace it. When even that fails, saving fails too and says why.
        A copy made earlier of the file as it is now is said again, not made anew: each command reads the file
        (a system timer's `cron run-due` every minute), and copies would pile up until a reminder is saved."""
        copy = self.path.with_name(f"{FILE_NAME}.corrupt-{datetime.now(UTC):%Y%m%dT%H%M%S}")
        try:
            if move:
                os.replace(self.path, copy)
            else:
                now = self.path.read_bytes()
                earlier = sorted(self.path.parent.glob(f"{FILE_NAME}.corrupt-*"), reverse=True)
                same = [made for made in earlier if made.is_file() and not made.is_symlink()
                        and made.stat().st_size == len(now) and made.read_bytes() == now]
                if same:
                    copy = same[0]
                else:
                    shutil.copy2(self.path, copy)
        except OSError as exc:
            self.problem = f"the reminders file {self.path} could not be read ({why}) nor set aside ({exc})"
        else:
            rest = f"the {kept} that could be read are kept" if kept else "reminders start empty"
            self.problem = (f"the reminders file {self.path} could not be read ({why}); it was "
                            f"{'moved' if move else 'copied'} to {copy} and {rest}")
        log.warning("%s", self.problem)


def render(jobs: list[Job]) -> str:
    """The file's text for `jobs` (made on the caller's thread, so a later change cannot tear it)."""
    return json.dumps({"version": VERSION, "jobs": [job_to_json(j) for j in jobs]}, indent=2,
                      ensure_ascii=False) + "\n"


def as_data(jobs: list[Job]) -> dict[str, dict[str, Any]]:
    """Each job as the file keeps it, by id: plain data, so a later change to a job cannot change it."""
    return {item["id"]: item for item in json.loads(render(jobs))["jobs"]}


def merged(read: dict[str, dict[str, Any]], mine: dict[str, dict[str, Any]],
           there: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The jobs to save: those `there` (the file now), with what this process changed since it `read` them put on:
    the jobs it added, the ones it removed taken out, and of each it changed the fields it changed (a field
    changed by both processes: this process's value wins; the other's changes to the job's other fields are kept).
    A job another process removed stays removed even when this one changed it: a run that ended here must not
    bring back a reminder deleted while it ran."""
    jobs = dict(there)
    for job_id, job in mine.items():
        before = read.get(job_id)
        if before is None:
            jobs[job_id] = job
        elif job != before and job_id in jobs:
            jobs[job_id] = {**jobs[job_id], **{key: value for key, value in job.items() if value != before.get(key)}}
    for job_id in read.keys() - mine.keys():
        jobs.pop(job_id, None)
    return list(jobs.values())


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _time(text: Any) -> datetime:
    moment = datetime.fromisoformat(str(text))
    if moment.tzinfo is None:
        raise ValueError(f"time without a timezone: {text}")
    return moment


def _maybe_time(text: Any) -> datetime | None:
    return None if text is None else _time(text)


@contextlib.contextmanager
def _flocked(path: Path, *, wait: bool) -> Iterator[bool]:
    """An exclusive lock on `path` (made if missing) shared with every process, held until the block ends: True
    once taken; without `wait`, False at once when another process holds it. Closing the file releases it, so a
    process that dies holds nothing."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)

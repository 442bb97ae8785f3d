"""Jobs across runs of the app: kept, run late within the grace, marked missed (and told once) beyond
it, never a burst of catch-up runs; a jobs file that cannot be read is kept aside and reported."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime, timedelta

from desktop.approvals.settings import ApprovalsConfig
from desktop.kernel.notices import Notice
from desktop.kernel.paths import home
from desktop.reminders import Reminders
from tests.fakeserver import FakeOpenAI
from tests.reminders.conftest import START, App, Notes, Runs


async def run_app(apps: Runs, at: datetime) -> App:
    """Close the app that runs (if any) and start the next one at `at`."""
    if apps and apps[-1].core is not None:
        await apps[-1].core.close()
    app = App(at, apps.notes)
    apps.append(app)
    await app.start()
    return app


async def quit_while_it_runs(app: App, fake: FakeOpenAI) -> None:
    """Let the armed wait pass, so the job's turn starts and waits for the model (slow this once); the caller then
    quits. The clock goes no further than the job's time: on a busy machine its turn once reached the model only
    after a further slice had passed, the clock reached the next slot, and the test asked about a later run."""
    assert app.core is not None
    due = min(job.next_run for job in app.core.get(Reminders).jobs if job.next_run is not None)
    # far longer than a quit takes, even on a machine so busy that closing the features eats the turns' grace
    fake.add({"content": "too late to be heard", "delay": 30})
    for _ in range(1500):
        if fake.requests:
            break
        if app.timer.delay is not None and app.clock.now() < due:  # the wait is cut into slices
            await app.elapse()
        await asyncio.sleep(0.02)
    assert len(fake.requests) == 1


async def a_backup_that_asked_for_exec(apps: Runs, fake: FakeOpenAI, notes: Notes) -> tuple[App, Notice]:
    """An app whose hourly backup ran, asked to use `exec` (approvals ask for it) and was refused: the app, and the
    notice that offers "Allow and run again"."""
    first = await run_app(apps, START)
    assert first.core is not None
    await first.core.settings.update(lambda config: config.section(ApprovalsConfig).tools.update(exec="ask"))
    await first.cron(action="add", message="Back up the notes", label="Backup", every=3600)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "I could not back them up."})
    for _ in range(12):
        await first.elapse()
    [note] = await notes.wait(1)
    assert note.on_action is not None
    return first, note


async def model_asked(fake: FakeOpenAI, times: int) -> None:
    """Until the scripted model has been asked `times` times (30 s at most)."""
    for _ in range(1500):
        if len(fake.requests) >= times:
            break
        await asyncio.sleep(0.02)


def saved() -> dict[str, dict[str, object]]:
    jobs = json.loads((home().state_dir / "cron_jobs.json").read_text())["jobs"]
    return {job["label"]: job for job in jobs}


async def test_jobs_survive_a_restart_and_run_in_the_next(apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    first = await run_app(apps, START)
    await first.cron(action="add", message="Water the plants", label="plants", **{"in": 3600})
    await first.cron(action="add", message="Summarise the news", label="news", cron="30 8 * * 1-5",
                     session="quick:morning")
    before, _ = await first.cron(action="list")
    again = await run_app(apps, START + timedelta(minutes=10))
    after, _ = await again.cron(action="list")
    assert after == before and "chat quick:morning" in after and "next Mon 2026-03-30 08:30 CEST" in after
    assert again.core is not None
    for _ in range(100):  # the app's timer wakes in slices until the hour is up
        if not any(job.label == "plants" for job in again.core.get(Reminders).jobs):
            break
        await again.elapse()
    [note] = await notes.wait(1)
    assert again.clock.now() == START + timedelta(hours=1) and note.target.session_key == "desktop:plans"  # type: ignore[union-attr]
    assert "Water the plants" in note.body  # the scripted model echoes what it was asked
    assert list(saved()) == ["news"]


async def test_a_one_shot_due_while_closed_runs_once_at_start_within_the_grace(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    first = await run_app(apps, START)
    await first.cron(action="add", message="Call Sam", label="Sam", **{"in": 600})
    later = await run_app(apps, START + timedelta(minutes=50))  # 40 minutes late: under the hour
    assert later.timer.delay == 0
    await later.elapse()
    [note] = await notes.wait(1)
    assert "Call Sam" in note.body and len(fake.requests) == 1
    assert saved() == {}


async def test_a_one_shot_too_late_is_marked_missed_and_the_user_told_once(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    first = await run_app(apps, START)
    await first.cron(action="add", message="Call Sam", label="Sam", **{"in": 600})
    later = await run_app(apps, START + timedelta(hours=3))
    await later.elapse()
    [note] = await notes.wait(1)
    assert note.title == "Reminder missed"
    assert note.body.startswith("“Sam” was due Sat 2026-03-28 13:10 CET, while the app was closed")
    assert fake.requests == []  # nothing was asked of the model
    listed, _ = await later.cron(action="list")
    assert "missed (was due Sat 2026-03-28 13:10 CET)" in listed
    assert saved()["Sam"]["missed"] == "2026-03-28T12:10:00+00:00"
    third = await run_app(apps, START + timedelta(hours=4))
    assert third.core is not None and third.core.get(Reminders).next_run() is None
    assert await third.core.get(Reminders).run_due() == []
    assert len(notes.shown) == 1 and fake.requests == []


async def test_a_recurring_job_never_fires_a_burst_of_catch_up_runs(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    first = await run_app(apps, START)
    await first.cron(action="add", message="Check the oven", label="oven", every=600)
    soon = await run_app(apps, START + timedelta(minutes=55))  # five runs fell while closed
    await soon.elapse()
    await notes.wait(1)
    assert len(fake.requests) == 1
    assert saved()["oven"]["next_run"] == "2026-03-28T13:00:00+00:00"  # back on its 10-minute grid
    late = await run_app(apps, START + timedelta(hours=8, minutes=5))
    assert late.core is not None and await late.core.get(Reminders).run_due() == []  # 7 hours late: skipped
    assert len(fake.requests) == 1 and len(notes.shown) == 1
    assert saved()["oven"]["next_run"] == "2026-03-28T20:10:00+00:00"


async def test_a_jobs_file_that_cannot_be_read_is_kept_aside_and_reported(
        apps: Runs, notes: Notes) -> None:
    state = home().state_dir
    state.mkdir(parents=True)
    (state / "cron_jobs.json").write_text('{"version": 1, "jobs": [{"id": "a1"', encoding="utf-8")
    app = await run_app(apps, START)
    [note] = await notes.wait(1)
    assert note.title == "Reminders file could not be read" and "cron_jobs.json.corrupt-" in note.body
    [kept] = state.glob("cron_jobs.json.corrupt-*")
    assert kept.read_text() == '{"version": 1, "jobs": [{"id": "a1"'
    out, ok = await app.cron(action="list")
    assert ok and out == "No scheduled jobs."
    await app.cron(action="add", message="x", **{"in": 60})
    assert len(saved()) == 1 and kept.read_text() == '{"version": 1, "jobs": [{"id": "a1"'


async def test_one_job_broken_by_hand_leaves_the_others_and_is_kept_aside(apps: Runs, notes: Notes) -> None:
    """A hand edit that broke one job's schedule used to empty the whole list (the file copied aside): every
    reminder the person had stopped, to be fixed by hand. Now only that job is left out, and the copy is named."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Water the plants", label="plants", **{"in": 3600})
    await first.cron(action="add", message="Call mum", label="mum", **{"in": 7200})
    assert first.core is not None
    await first.core.close()
    path = home().state_dir / "cron_jobs.json"
    data = json.loads(path.read_text())
    data["jobs"][0]["schedule"] = "every day"  # a string where the schedule's object was
    path.write_text(json.dumps(data), encoding="utf-8")
    written = path.read_text()
    again = await run_app(apps, START + timedelta(minutes=10))
    [note] = await notes.wait(1)
    assert note.title == "Reminders file could not be read" and "job 1" in note.body
    assert "the 1 that could be read are kept" in note.body
    [kept] = path.parent.glob("cron_jobs.json.corrupt-*")
    assert kept.name in note.body and kept.read_text() == written
    listed, ok = await again.cron(action="list")
    assert ok and "mum" in listed and "plants" not in listed


async def test_a_jobs_file_of_bytes_that_are_not_text_is_kept_aside_and_the_app_starts(
        apps: Runs, notes: Notes) -> None:
    """A disk fault that left bytes that are not UTF-8 in the jobs file stopped the app from starting at all."""
    state = home().state_dir
    state.mkdir(parents=True)
    written = b'{"version": 1, "jobs": [{"id": "a1", "message": "\xff\xfe\x00'
    (state / "cron_jobs.json").write_bytes(written)
    app = await run_app(apps, START)
    [note] = await notes.wait(1)
    [kept] = state.glob("cron_jobs.json.corrupt-*")
    assert note.title == "Reminders file could not be read" and kept.name in note.body
    assert kept.read_bytes() == written
    out, ok = await app.cron(action="list")
    assert ok and out == "No scheduled jobs."


async def test_a_jobs_file_the_app_cannot_open_is_moved_aside_not_replaced_by_the_next_reminder(
        apps: Runs, notes: Notes) -> None:
    """A folder in its place here; a file copied back as root, which this user may not read, the same way: it used
    to count as no jobs, and the next reminder saved replaced it."""
    state = home().state_dir
    (state / "cron_jobs.json").mkdir(parents=True)
    (state / "cron_jobs.json" / "jobs-from-backup.json").write_text("the person's jobs", encoding="utf-8")
    app = await run_app(apps, START)
    [note] = await notes.wait(1)
    assert note.title == "Reminders file could not be read" and "moved to" in note.body
    [kept] = state.glob("cron_jobs.json.corrupt-*")
    assert kept.name in note.body
    await app.cron(action="add", message="x", **{"in": 60})
    assert len(saved()) == 1 and (kept / "jobs-from-backup.json").read_text() == "the person's jobs"


async def test_a_one_shot_whose_turn_the_quit_cut_short_runs_at_the_next_start(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """Quitting while a one-shot reminder's turn waited for the model took the job out of the file for good: no
    answer, no notice, and the next start had nothing to run. Now it is still due there, and runs late."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Call Sam", label="Sam", **{"in": 60})
    await quit_while_it_runs(first, fake)
    later = await run_app(apps, START + timedelta(minutes=5))
    assert list(saved()) == ["Sam"]
    await later.elapse()
    [note] = await notes.wait(1)
    assert "Call Sam" in note.body and len(fake.requests) == 2
    assert saved() == {}


async def test_a_recurring_run_the_quit_cut_short_runs_at_the_next_start(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """Quitting while an "every 10 minutes" job's turn waited for the model: the file already said its next run
    was the following slot, so that run's reminder was never said. Now it runs once at the next start (late)."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Check the oven", label="oven", every=600)
    await quit_while_it_runs(first, fake)
    later = await run_app(apps, START + timedelta(minutes=15))
    assert saved()["oven"]["next_run"] == "2026-03-28T12:10:00+00:00"  # the run that did not end, still due
    assert later.timer.delay == 0
    await later.elapse()
    [note] = await notes.wait(1)
    assert "Check the oven" in note.body and len(fake.requests) == 2
    assert saved()["oven"]["next_run"] == "2026-03-28T12:20:00+00:00"  # on its grid, no burst


async def test_allow_and_run_again_then_quitting_at_once_keeps_the_grant(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """"Allow and run again" saved the grant in the background, and quitting cancelled that save: a Quit that
    reached the reminders before the save began (a save under way holding the file, a busy app) lost the grant,
    and the next run failed again for the tool just allowed. Now quitting waits for it."""
    first, note = await a_backup_that_asked_for_exec(apps, fake, notes)
    assert first.core is not None and saved()["Backup"]["wanted"] == ["exec"]
    note.on_action("again")
    await first.core.get(Reminders).close()  # quitting reaches the reminders at once
    await first.core.close()
    assert saved()["Backup"]["grants"] == {"exec": "allow"}


async def test_a_run_again_the_quit_cut_short_runs_at_the_next_start(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """"Allow and run again" says the job is running again; quitting while that run waited for the model left no
    trace of it: the next start ran nothing until the job's next hour, and the answer asked for never came. Now
    the run is due in the file until it ends, so the next start makes it (with the grant)."""
    first, note = await a_backup_that_asked_for_exec(apps, fake, notes)
    assert first.core is not None and note.on_action is not None
    fake.add({"content": "too late to be heard", "delay": 30})  # longer than any quit
    note.on_action("again")
    await model_asked(fake, 3)
    later = await run_app(apps, first.clock.now() + timedelta(minutes=5))
    assert later.timer.delay == 0
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Backed up."})
    await later.elapse()
    assert (await notes.wait(2))[1].body == "Backed up."
    assert later.core is not None and (later.core.workspace / "ran.txt").read_text() == "ran\n"


async def test_a_run_now_the_quit_cut_short_runs_at_the_next_start(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """The Reminders window's Run now, then Quit while that run waited for the model: its answer never came and
    nothing said so. Now it is made at the next start."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Check the oven", label="oven", every=3600)
    assert first.core is not None
    fake.add({"content": "too late to be heard", "delay": 30})  # longer than any quit
    first.core.get(Reminders).run_now(first.core.get(Reminders).jobs[0].id)
    await model_asked(fake, 1)
    later = await run_app(apps, START + timedelta(minutes=5))
    assert later.timer.delay == 0
    await later.elapse()
    [note] = await notes.wait(1)
    assert "Check the oven" in note.body and len(fake.requests) == 2
    assert saved()["oven"]["next_run"] == "2026-03-28T13:00:00+00:00"  # its own hour stays as it was


async def test_a_run_whose_turn_ended_as_the_app_quit_is_not_made_again_at_the_next_start(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """Quitting stopped waiting for a reminder's turn before the turns were let finish: a turn that then ended
    (its answer saved in the chat) left the job due in the file, so the next start ran it again and the person
    was reminded twice. Now the run's end is saved as it was answered."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Check the oven", label="oven", every=600)
    held = threading.Event()
    fake.add({"content": "The oven is off.", "after": held})
    for _ in range(1500):
        if fake.requests:
            break
        if first.timer.delay is not None and first.clock.now() < START + timedelta(minutes=10):
            await first.elapse()
        await asyncio.sleep(0.02)
    assert len(fake.requests) == 1
    held.set()  # the model answers while the app quits
    assert first.core is not None
    await first.core.close(grace=60)
    assert [run["outcome"] for run in saved()["oven"]["runs"]] == ["answered"]  # type: ignore[union-attr]
    assert saved()["oven"]["next_run"] == "2026-03-28T12:20:00+00:00"
    later = await run_app(apps, START + timedelta(minutes=15))
    assert later.timer.delay != 0 and len(fake.requests) == 1
    assert later.core is not None
    answers = [m["content"] for m in (await later.core.sessions.load("desktop:plans")).messages
               if m["role"] == "assistant"]
    assert answers == ["The oven is off."]


async def test_a_deleted_job_run_again_from_its_old_notice_does_not_come_back_after_a_quit(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """"Allow and run again" on the notice of an hourly job the person had deleted since put it back in the file
    as due until the run ended: quitting meanwhile brought the deleted job back for good, running every hour. Now
    the run asked for is made, and the job stays deleted."""
    first, note = await a_backup_that_asked_for_exec(apps, fake, notes)
    assert first.core is not None and note.on_action is not None
    reminders = first.core.get(Reminders)
    await reminders.remove(reminders.jobs[0].id)
    fake.add({"content": "too late to be heard", "delay": 30})  # longer than any quit
    note.on_action("again")
    await model_asked(fake, 3)
    await run_app(apps, first.clock.now() + timedelta(minutes=5))
    assert saved() == {}


async def test_a_run_now_while_the_scheduled_run_goes_on_is_made_at_the_next_start_when_the_quit_cuts_it_short(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    """Run now while the job's scheduled run still waited for the model: the two runs shared one "still due" mark,
    so the scheduled run ending cleared it, and quitting during the run asked for left no trace of it: the next
    start ran nothing until the job's next hour. Now each run keeps its own mark until it ends."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Check the oven", label="oven", every=3600)
    assert first.core is not None
    reminders = first.core.get(Reminders)
    held = threading.Event()
    fake.add({"content": "The oven is off.", "after": held},
             {"content": "too late to be heard", "delay": 30})  # longer than any quit
    for _ in range(1500):  # the scheduled run starts on the hour and waits for the model
        if fake.requests:
            break
        if first.timer.delay is not None and first.clock.now() < START + timedelta(hours=1):
            await first.elapse()
        await asyncio.sleep(0.02)
    assert len(fake.requests) == 1
    reminders.run_now(reminders.jobs[0].id)
    held.set()  # the scheduled run ends; the run asked for goes on
    [note] = await notes.wait(1)
    assert note.body == "The oven is off."
    await model_asked(fake, 2)
    later = await run_app(apps, first.clock.now() + timedelta(minutes=5))
    assert later.timer.delay == 0
    await later.elapse()
    second = (await notes.wait(2))[1]
    assert "Check the oven" in second.body and len(fake.requests) == 3
    assert saved()["oven"]["next_run"] == "2026-03-28T14:00:00+00:00"  # its own hour stays as it was


async def test_two_runs_at_once_keep_what_each_other_saved(apps: Runs) -> None:
    """Two processes on one home (the app and a command, or two commands: each has its own copy of the jobs):
    each save keeps what the other saved since, and takes it in; a job both changed keeps both changes."""
    first = await run_app(apps, START)
    await first.cron(action="add", message="Water the plants", label="plants", every=3600)
    await first.cron(action="add", message="Summarise the news", label="news", every=7200)
    second = App(START, apps.notes)
    apps.append(second)
    await second.start()
    assert first.core is not None and second.core is not None
    mine, theirs = first.core.get(Reminders), second.core.get(Reminders)
    ids = {job.label: job.id for job in mine.jobs}
    await first.cron(action="remove", id=ids["news"])
    await first.cron(action="add", message="Read the mail", label="mail", every=3600)
    await mine.set_grant(ids["plants"], "exec", "allow")
    await theirs.set_paused(ids["plants"], True)  # saved over a file the first changed since the second read it
    assert list(saved()) == ["plants", "mail"]
    assert saved()["plants"]["paused"] is True and saved()["plants"]["grants"] == {"exec": "allow"}
    assert [job.label for job in theirs.jobs] == ["plants", "mail"]  # taken in: its list and its timer know them
    assert theirs.jobs[0].grants == {"exec": "allow"}
    await mine.set_grant(ids["plants"], "exec", "deny")  # the first had not seen the pause: it takes it in
    assert saved()["plants"]["paused"] is True and saved()["plants"]["grants"] == {"exec": "deny"}
    assert mine.jobs[0].paused and mine.next_run() == mine.jobs[1].next_run

"""Each job's last runs, through the real core and the scripted server reporting fixed token counts: how each
run ended with exactly its own calls' tokens (not those of a typed turn or of another job of the same chat), a
failed run, one stopped by the per-run budget, runs missed while the app was closed or the computer asleep; kept
across a restart, the newest ten, and no word of the reminder or its answer in them."""

from __future__ import annotations

import json
from datetime import timedelta

from desktop.kernel.paths import home
from desktop.reminders import Reminders
from desktop.reminders.jobs import Job
from desktop.reminders.runs import KEPT, Outcome, Run
from desktop.usage.settings import BudgetsConfig
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.reminders.conftest import START, App, Notes, Runs
from tests.reminders.test_restarts import run_app


def counts(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


def the_job(app: App) -> Job:
    assert app.core is not None
    [job] = app.core.get(Reminders).jobs
    return job


async def run_once(app: App, notes: Notes, count: int) -> list[Run]:
    """Let the app's timer pass, in its slices, until the job comes due once, and wait for that run's notice
    (the `count`th): its run is on record by then."""
    due = the_job(app).next_run
    for _ in range(30):
        if the_job(app).next_run != due:
            break
        await app.elapse()
    await notes.wait(count)
    return the_job(app).runs


def summary(runs: list[Run]) -> list[tuple[str, int, str]]:
    return [(run.outcome.value, run.tokens, run.reason) for run in runs]


async def test_each_run_keeps_its_outcome_and_exactly_its_own_tokens_across_a_restart(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    app = await run_app(apps, START)
    assert app.core is not None
    await app.cron(action="add", message="Check the secret oven", label="Oven", every=600)
    fake.add({"content": "Noted.", "usage": counts(400, 4)})  # a typed turn in the same chat: not the job's
    await Conversation(app.core, "desktop", "plans").ask("hello")
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1000, 20)},
             {"content": "The oven is fine.", "usage": counts(1100, 30)})
    await run_once(app, notes, 1)
    assert summary(the_job(app).runs) == [("answered", 2150, "")]
    assert the_job(app).runs[0].at == START + timedelta(minutes=10) and the_job(app).runs[0].cost_usd is None

    fake.add({"status": 400, "body": {"error": {"message": "model is overloaded", "type": "invalid_request_error"}}})
    [answered, failed] = await run_once(app, notes, 2)
    assert failed.outcome is Outcome.FAILED and failed.tokens == 0 and "model is overloaded" in failed.reason

    again = await run_app(apps, START + timedelta(hours=3))  # two hours and more late: the app was closed
    await again.elapse()
    runs = the_job(again).runs
    assert runs[:2] == [answered, failed]
    assert summary(runs[2:]) == [("missed", 0, "the app was closed")]
    assert runs[2].at == START + timedelta(minutes=30)  # when it was due
    saved = (home().state_dir / "cron_jobs.json").read_text()
    assert "The oven is fine" not in saved and saved.count("secret oven") == 1  # the job's own message only


async def test_two_jobs_of_one_chat_due_together_each_count_only_their_own_calls(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    assert app.core is not None
    await app.cron(action="add", message="Water the plants", label="Plants", **{"in": 600})
    await app.cron(action="add", message="Feed the cat", label="Cat", **{"in": 600})
    await app.cron(action="add", message="Check the post", label="Post", every=3600)  # keeps the timer armed
    reminders = app.core.get(Reminders)
    plants, cat = reminders.jobs[:2]
    fake.add({"content": "Watered.", "usage": counts(100, 1)}, {"content": "Fed.", "usage": counts(200, 2)})
    for _ in range(2):
        await app.elapse()
    await notes.wait(2)
    assert summary(plants.runs) == [("answered", 101, "")] and summary(cat.runs) == [("answered", 202, "")]


async def test_a_run_stopped_by_the_per_run_budget_says_so_with_what_it_used(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    assert app.core is not None
    await app.core.settings.update(lambda config: setattr(config.section(BudgetsConfig), "per_run_tokens", 500))
    await app.cron(action="add", message="Tidy the notes", label="Tidy", every=3600)
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(700, 10)})
    [run] = await run_once(app, notes, 1)
    assert run.outcome is Outcome.BUDGET and run.tokens == 710 and "per_run_tokens" in run.reason
    assert len(fake.requests) == 1  # the second call was never made


async def test_runs_missed_while_asleep_or_closed_say_which_and_only_the_newest_are_kept(
        apps: Runs, fake: FakeOpenAI, notes: Notes) -> None:
    app = await run_app(apps, START)
    await app.cron(action="add", message="Call Sam", label="Sam", **{"in": 600})
    await app.cron(action="add", message="Stretch", label="Stretch", every=600)
    app.clock.sleep_machine(2 * 3600)  # the laptop sleeps through both
    await app.elapse()
    [note] = await notes.wait(1)
    assert note.body == "“Sam” was due Sat 2026-03-28 13:10 CET, while the computer was asleep, so it did not run."
    assert app.core is not None
    jobs = {job.label: job for job in app.core.get(Reminders).jobs}
    assert summary(jobs["Sam"].runs) == summary(jobs["Stretch"].runs) == [("missed", 0, "the computer was asleep")]
    assert fake.requests == []

    stretch = jobs["Stretch"]
    for hours in range(3, 3 + KEPT + 2):  # a dozen more runs missed while the app was closed
        later = await run_app(apps, START + timedelta(hours=hours * 2))
        await later.elapse()
        assert later.core is not None
        stretch = next(job for job in later.core.get(Reminders).jobs if job.label == "Stretch")
    assert len(stretch.runs) == KEPT and {run.reason for run in stretch.runs} == {"the app was closed"}
    assert json.loads((home().state_dir / "cron_jobs.json").read_text())["jobs"][1]["runs"][-1]["outcome"] == "missed"

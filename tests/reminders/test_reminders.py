"""Reminders through the real core and the scripted model: made by the model in a chat, run there when due
and notified; every schedule kind's next run across the spring-forward change; restarts; late runs."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from desktop.approvals.settings import ApprovalsConfig
from desktop.conversation.transcript import Kind, rows_from_messages, tool_summary
from desktop.kernel.bus import TurnFinished
from desktop.kernel.notices import OpenChat
from desktop.kernel.paths import home
from desktop.reminders import Reminders
from desktop.scheduler import Scheduler
from desktop.session.session import SessionStore
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.reminders.conftest import START, App, Notes

JOBS_FILE = "cron_jobs.json"


def saved_jobs() -> list[dict[str, object]]:
    return json.loads((home().state_dir / JOBS_FILE).read_text())["jobs"]


async def test_the_model_schedules_a_reminder_that_runs_in_its_chat_and_is_notified(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    assert app.core is not None
    fake.add({"tool_calls": [{"name": "cron", "arguments": {
                 "action": "add", "in": 1200, "label": "Stretch",
                 "message": "Remind the user to stand up and stretch"}}]},
             {"content": "I'll remind you at 13:20."})
    chat = Conversation(app.core, "desktop", "plans")
    end = await chat.ask("remind me to stretch in 20 minutes")
    assert isinstance(end, TurnFinished) and end.content == "I'll remind you at 13:20."
    tool_result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "Sat 2026-03-28 13:20 CET" in tool_result and "this chat" in tool_result
    [job] = saved_jobs()
    assert job["session"] == "desktop:plans" and job["next_run"] == "2026-03-28T12:20:00+00:00"

    fake.add({"content": "Time to **stand up** and stretch!"})
    for _ in range(4):
        assert not notes.shown
        await app.elapse()  # 20 minutes pass in waits of at most 5
    assert app.clock.now() == START + timedelta(minutes=20)
    [note] = await notes.wait(1)
    assert note.title == "remind me to stretch in 20 minutes: Stretch"
    session = await app.core.sessions.load("desktop:plans")
    assert note.body == "Time to stand up and stretch!"
    assert note.target == OpenChat("desktop:plans", len(session.messages) - 1)  # opens the chat at the answer
    asked = [m for m in session.messages if m["role"] == "user"][-1]
    assert asked["kind"] == "scheduled" and "Remind the user to stand up and stretch" in asked["content"]
    assert session.messages[-1]["content"] == "Time to **stand up** and stretch!"
    assert saved_jobs() == []  # a one-shot is done once it ran
    runtime = fake.requests[-1]["messages"][-1]["content"]  # every turn is told the user's time and zone
    assert re.search(r"Current time: \d{4}-\d\d-\d\d \d\d:\d\d \(\w+day\) CES?T \(UTC\+0[12]:00, "
                     r"timezone Europe/Paris\)", runtime), runtime


async def test_a_reminder_whose_model_call_fails_still_delivers_its_own_text(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    assert app.core is not None
    await app.cron(action="add", message="Take the bread out of the oven", label="Bread", **{"in": 60})
    fake.add({"status": 400, "body": {"error": {"message": "model is overloaded", "type": "invalid_request_error"}}})
    await app.elapse()
    [note] = await notes.wait(1)
    assert note.title.endswith(": Bread")  # the reminder itself, not "reminder failed"
    assert "Take the bread out of the oven" in note.body and "could not be reached" in note.body
    assert "model is overloaded" in note.body
    session = await app.core.sessions.load("desktop:plans")
    delivered = session.messages[-1]
    assert delivered["role"] == "assistant" and "Take the bread out of the oven" in delivered["content"]
    assert "could not be reached" in delivered["content"]
    assert note.target == OpenChat("desktop:plans", len(session.messages) - 1)  # opens the chat at it
    assert [m for m in session.messages if m.get("failed")]  # the failure itself stays on record


async def test_a_reminder_that_begins_a_chat_names_it_and_the_persons_first_words_there_leave_the_name(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    """A reminder made in a chat that /new emptied since (or nobody typed in) comes due there: the chat is called
    after the reminder, saved with it (a store reading the files afresh lists it so, as the chat list does after a
    restart), and so is its notice, never the chat's key; what the person then types there keeps the name."""
    assert app.core is not None
    await app.cron(session="desktop:3f2a9c1e", action="add", message="Stand up and stretch", label="Stretch",
                   **{"in": 60})
    fake.add({"content": "Time to stretch!"})
    await app.elapse()
    [note] = await notes.wait(1)
    assert note.title == "Reminder: Stretch" and note.body == "Time to stretch!"

    async def listed() -> str:
        return {i.key: i.title for i in await SessionStore(app.core.sessions.directory).list()}["desktop:3f2a9c1e"]

    assert await listed() == "Reminder: Stretch"
    fake.add({"content": "Well done."})
    await Conversation(app.core, "desktop", "3f2a9c1e").ask("done, what next?")
    assert await listed() == "Reminder: Stretch"


async def test_each_kind_of_schedule_has_the_right_next_run_across_the_clock_change(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    out, ok = await app.cron(action="add", message="m1", label="at nine", at="2026-03-29T09:00")
    assert ok and "Sun 2026-03-29 09:00 CEST" in out  # a naive time is local time, summer time by then
    await app.cron(action="add", message="m2", label="in a day", **{"in": 86400})
    await app.cron(action="add", message="m3", label="every day", every=86400)
    await app.cron(action="add", message="m4", label="daily nine", cron="0 9 * * *")
    await app.cron(action="add", message="m5", label="tokyo nine", cron="0 9 * * *", tz="Asia/Tokyo")
    runs = {job["label"]: job["next_run"] for job in saved_jobs()}
    assert runs == {
        "at nine": "2026-03-29T07:00:00+00:00",
        "in a day": "2026-03-29T12:00:00+00:00",  # 24 h later, so 14:00 on the clock after the change
        "every day": "2026-03-29T12:00:00+00:00",
        "daily nine": "2026-03-29T07:00:00+00:00",  # 09:00 Paris summer time
        "tokyo nine": "2026-03-29T00:00:00+00:00",
    }
    listed, _ = await app.cron(action="list")
    assert "daily nine” · every day at 09:00 (Europe/Paris) · next Sun 2026-03-29 09:00 CEST · this chat" in listed

    app.clock.advance((datetime(2026, 3, 29, 7, 0, tzinfo=UTC) - START).total_seconds())
    assert app.core is not None
    app.core.get(Scheduler).run_due()  # the machine slept until 09:00 Paris time
    await notes.wait(2)
    runs = {job["label"]: job["next_run"] for job in saved_jobs()}
    assert "at nine" not in runs and runs["daily nine"] == "2026-03-30T07:00:00+00:00"
    assert runs["every day"] == "2026-03-29T12:00:00+00:00"
    # Tokyo's 09:00 came 7 hours ago, beyond the hour's grace: no late run, on to the next one
    assert runs["tokyo nine"] == "2026-03-30T00:00:00+00:00"
    assert len(fake.requests) == 2


async def test_the_chat_names_reminders_and_when_they_run_in_words(app: App, fake: FakeOpenAI, notes: Notes) -> None:
    """The cards of the model's cron calls and the divider above a run's answer, as saved (what a restart shows):
    the job's name and when it runs, never its id or the tool's action."""
    assert app.core is not None
    fake.add({"tool_calls": [
        {"name": "cron", "arguments": {"action": "add", "label": "Tea", "message": "Tea time", "at": "2026-03-28T17:00"}},
        {"name": "cron", "arguments": {"action": "add", "message": "Water the plants on the balcony, both boxes "
                                                                   "and the pot", "at": "2026-03-29T09:30"}},
        {"name": "cron", "arguments": {"action": "add", "label": "Stretch", "message": "Stand up", "every": 7200}},
        {"name": "cron", "arguments": {"action": "add", "label": "Standup", "message": "Standup notes",
                                       "cron": "0 14 * * *"}},
        {"name": "cron", "arguments": {"action": "list"}}]},
        {"content": "All set."})
    chat = Conversation(app.core, "desktop", "plans")
    await chat.ask("set up my day")
    [tea] = [job for job in app.core.get(Reminders).jobs if job.label == "Tea"]
    fake.add({"tool_calls": [{"name": "cron", "arguments": {"action": "remove", "id": tea.id}}]}, {"content": "Gone."})
    await chat.ask("no tea today")
    saved = (await app.core.sessions.load("desktop:plans")).messages
    cards = [tool_summary(row.tool) for row in rows_from_messages(saved) if row.tool is not None]
    assert cards == ["Tea · today at 17:00", "Water the plants on the balcony, both b… · tomorrow at 09:30",
                     "Stretch · every 2 hours", "Standup · every day at 14:00 (Europe/Paris)", "all reminders",
                     "cancel “Tea”"]

    fake.add({"content": "Standup time."})
    app.clock.advance(3600)  # 14:00 in Paris
    app.core.get(Scheduler).run_due()
    await notes.wait(1)
    rows = rows_from_messages((await app.core.sessions.load("desktop:plans")).messages)
    assert [(r.kind, r.text) for r in rows[-2:]] == [
        (Kind.NOTICE, "Reminder “Standup” came due · next Sun 29 Mar at 14:00"), (Kind.ASSISTANT, "Standup time.")]


async def test_bad_input_is_a_clear_tool_error(app: App) -> None:
    cases = {
        "unknown timezone 'Mars/Base'": {"cron": "0 9 * * *", "tz": "Mars/Base"},
        "5 fields": {"cron": "0 9 * *"},
        "not a valid cron expression": {"cron": "0 25 * * *"},
        "is in the past (it is now 2026-03-28 13:00 CET)": {"at": "2026-03-28T12:00"},
        "exactly one of": {"at": "2026-03-29T09:00", "in": 60},
        "got none": {},
        "'every' must be from 60 to 3153600000 seconds (100 years), got 30": {"every": 30},
        "'every' must be from 60 to 3153600000 seconds (100 years), got 1000000000000": {"every": 10 ** 12},
        "'in' is a number of seconds from now": {"in": 0},
        "'in' is at most 3153600000 seconds (100 years); got 1000000000000": {"in": 10 ** 12},
        "'tz' applies to 'at' and 'cron' only": {"every": 600, "tz": "Europe/Paris"},
        "should be an ISO time": {"at": "tomorrow at nine"},
    }
    for expected, schedule in cases.items():
        out, ok = await app.cron(action="add", message="x", **schedule)
        assert not ok and expected in out, (expected, out)
    out, ok = await app.cron(action="add", **{"in": 60})
    assert not ok and "add needs 'message'" in out
    out, ok = await app.cron(action="remove", id="nope")
    assert not ok and "no scheduled job with id 'nope'" in out
    assert not (home().state_dir / JOBS_FILE).exists()  # nothing half made


async def test_a_schedule_that_never_comes_or_leaves_the_calendar_is_a_clear_tool_error(
        app: App, fake: FakeOpenAI) -> None:
    """A cron day no month has (Feb 31) failed as a crash of the tool ("CroniterBadDateError: failed to find
    next date"), a time before the calendar's start too, and an 'in' of NaN ended the whole turn with an error
    (naming the call for its card raised): each is now a tool error the model reads and corrects."""
    cases = {
        "'0 9 31 2 *' never comes": {"cron": "0 9 31 2 *"},
        "'at' 0001-01-01T00:00+14:00 is out of range": {"at": "0001-01-01T00:00+14:00"},
    }
    for expected, schedule in cases.items():
        out, ok = await app.cron(action="add", message="x", **schedule)
        assert not ok and expected in out and "failed:" not in out, (expected, out)
    fake.add({"tool_calls": [{"name": "cron", "arguments": {"action": "add", "message": "x", "in": float("nan")}}]},
             {"content": "Let me try that again."})
    end = await Conversation(app.core, "desktop", "plans").ask("remind me")
    assert isinstance(end, TurnFinished) and end.content == "Let me try that again."
    tool_result = next(m for m in fake.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "in should be integer" in tool_result
    assert not (home().state_dir / JOBS_FILE).exists()  # nothing half made


async def test_the_cron_skill_is_offered_with_the_tool_it_describes(app: App) -> None:
    assert app.core is not None
    assert "cron" in [schema["function"]["name"] for schema in app.core.tools.schemas()]
    prompt = app.core.context.system_prompt()
    assert "<name>cron</name>" in prompt


async def test_a_paused_job_does_not_run_and_resumes_without_making_up_runs(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    assert app.core is not None
    reminders = app.core.get(Reminders)
    await app.cron(action="add", message="Check the oven", label="oven", every=600)
    await app.cron(action="add", message="Call Sam", label="Sam", **{"in": 900})
    oven, sam = reminders.jobs
    await reminders.set_paused(oven.id, True)
    await reminders.set_paused(sam.id, True)
    assert reminders.next_run() is None
    app.clock.advance(3600)
    assert await reminders.run_due() == [] and fake.requests == []
    await reminders.set_paused(oven.id, False)
    await reminders.set_paused(sam.id, False)
    assert oven.next_run == START + timedelta(minutes=70)  # the next slot on its grid, no runs made up
    assert sam.missed == START + timedelta(minutes=15) and sam.next_run is None  # its time passed meanwhile
    listed, _ = await app.cron(action="list")
    assert "missed (was due Sat 2026-03-28 13:15 CET)" in listed and notes.shown == []


async def test_a_reminder_that_wanted_a_tool_says_which_and_allow_and_run_again_runs_it_with_the_grant(
        app: App, fake: FakeOpenAI, notes: Notes) -> None:
    """Someone listens for questions, yet the reminder's exec (set to ask) is not asked about: it fails at once,
    the notice names it with "Allow and run again", and that grants it to the job and runs the job once more."""
    assert app.core is not None
    await app.core.settings.update(lambda config: config.section(ApprovalsConfig).tools.update(exec="ask"))
    asked: list[object] = []
    app.core.questions.subscribe(asked.append)  # a question would wait approvals.timeout (10 minutes) unanswered
    await app.cron(action="add", message="Back up the notes", label="Backup", every=3600)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "I could not back them up."})
    for _ in range(12):
        await app.elapse()
    [note] = await notes.wait(1)
    assert note.body.startswith("I could not back them up.\nIt wanted to use exec without asking")
    assert note.actions == (("again", "Allow and run again"),) and note.on_action is not None and not asked
    [job] = app.core.get(Reminders).jobs
    assert job.wanted == ["exec"] and job.grants == {}
    assert not (app.core.workspace / "ran.txt").exists()

    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Backed up."})
    note.on_action("again")
    again = (await notes.wait(2))[1]
    assert again.body == "Backed up." and not again.actions and not asked
    assert (app.core.workspace / "ran.txt").read_text() == "ran\n"
    assert saved_jobs()[0]["grants"] == {"exec": "allow"} and saved_jobs()[0]["wanted"] == []

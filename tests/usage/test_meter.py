"""Budgets for unattended work, through the real core and the scripted server: once today's reminders,
heartbeats, Dreams and background tasks reach a limit, none of them makes another request (until midnight or
a higher limit) and the person is told once; typed chats go on; one run past `per_run_tokens` is stopped and
says so; the command line prints the reason and fails."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from desktop.core import Core, build_core
from desktop.heartbeat import Heartbeat
from desktop.kernel.bus import TurnError
from desktop.kernel.work import Source
from desktop.reminders import Reminders
from desktop.scheduler.schedules import At
from desktop.usage import Usage
from desktop.usage.meter import PAUSED
from desktop.usage.records import CallRecord
from desktop.usage.report import midnight
from desktop.usage.settings import BudgetsConfig
from tests.cli.in_process import run_main
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.heartbeat.test_heartbeat import TASKS
from tests.reminders.conftest import Notes
from tests.usage.test_counting import counts, recorded


def earlier_today(source: Source, tokens: int, cost: float | None = None, day: date | None = None) -> CallRecord:
    at = midnight(day) + 60 if day else max(midnight(date.today()), time.time() - 60)
    return CallRecord(at, source, "system:heartbeat", "openai/test", tokens, 0, 0, cost)


def write_log(home: Path, *records: CallRecord) -> None:
    path = home / "data" / "usage.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))


async def test_a_budget_reached_mid_day_stops_unattended_calls_but_never_typed_chats(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    notes = Notes()
    core.bus.subscribe(notes.hear)
    core.config.section(BudgetsConfig).unattended_daily_tokens = 1000
    (core.workspace / "HEARTBEAT.md").write_text(TASKS)
    fake.add({"content": "NOTHING_TO_REPORT", "usage": counts(900, 150)})
    assert (await core.get(Heartbeat).run()).quiet  # 1,050 tokens: the limit is reached with this one
    [told] = await notes.wait(1)
    assert told.title == PAUSED and "1,050 tokens of the 1,000" in told.body
    assert core.get(Usage).meter.today == (1050, 0.0)

    asked = len(fake.requests)
    beat = await core.get(Heartbeat).run()
    assert len(fake.requests) == asked  # the next heartbeat made no request
    assert "budget for unattended work is used up" in beat.error
    reminders = core.get(Reminders)
    job = await reminders.add("desktop:plans", At(datetime.now(UTC) + timedelta(hours=1)), "Call Sam")
    ran = await asyncio.wait_for(reminders.run_now(job.id), 60)
    assert isinstance(ran.end, TurnError) and "budget" in ran.end.message and len(fake.requests) == asked

    fake.add({"content": "Typed chats go on.", "usage": counts(5000, 50)})
    assert (await chat.ask("still there?")).content == "Typed chats go on."
    assert [n.title for n in notes.shown].count(PAUSED) == 1  # told once

    core.config.section(BudgetsConfig).unattended_daily_tokens = 5000  # raised: the heartbeat works again
    fake.add({"content": "NOTHING_TO_REPORT", "usage": counts(10, 1)})
    assert (await core.get(Heartbeat).run()).error == "" and len(fake.requests) == asked + 2


async def test_todays_use_is_read_back_at_start_and_only_unattended_work_of_today_counts(
        model_config: dict, home_dir: Path, fake: FakeOpenAI, memory_keyring: object) -> None:
    write_config(home_dir, **model_config, budgets={"unattended_daily_cost": 1.0})
    write_log(home_dir, earlier_today(Source.DREAM, 100, 2.5, day=date.today() - timedelta(days=1)),
              earlier_today(Source.HEARTBEAT, 100, 0.4), earlier_today(Source.CHAT, 100, 5.0),
              earlier_today(Source.REMINDER, 100, 0.7))
    core = await asyncio.to_thread(build_core)  # the app started again later the same day
    await core.start()
    try:
        tokens, cost = core.get(Usage).meter.today
        assert (tokens, cost) == (200, pytest.approx(1.1))  # yesterday's and typed work do not count
        (core.workspace / "HEARTBEAT.md").write_text(TASKS)
        beat = await core.get(Heartbeat).run()
        assert "$1.10 of the $1.00 budgets.unattended_daily_cost allows" in beat.error
    finally:
        await core.close()
    assert fake.requests == []


async def test_one_run_past_the_per_run_ceiling_is_stopped_and_says_so(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    core.config.section(BudgetsConfig).per_run_tokens = 1000
    looping = {"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(550, 50)}
    fake.default = lambda body: looping
    reminders = core.get(Reminders)
    job = await reminders.add("desktop:plans", At(datetime.now(UTC) + timedelta(hours=1)), "List forever")
    ran = await asyncio.wait_for(reminders.run_now(job.id), 60)
    assert isinstance(ran.end, TurnError)
    assert ran.end.message == ("This reminder run was stopped: its model calls used 1,200 tokens, and "
                               "budgets.per_run_tokens allows 1,000 for one run.")
    assert len(fake.requests) == 2
    fake.default = lambda body: looping if len(fake.requests) < 5 else {"content": "Done.", "usage": counts(1, 1)}
    assert (await chat.ask("list it a few times")).content == "Done."  # a typed turn has no ceiling
    assert sum(r.tokens for r in await recorded(core) if r.source is Source.CHAT) > 1000


def test_heartbeat_and_run_due_print_the_budget_and_fail(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url, budgets={"unattended_daily_tokens": 50})
    write_log(tmp_path, earlier_today(Source.HEARTBEAT, 60))
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text(TASKS)
    beat = run_main(tmp_path, "heartbeat", "--standalone")
    assert beat.returncode == 1 and "Today's budget for unattended work is used up: 60 tokens" in beat.stderr
    from desktop.reminders.jobs import Job, JobStore, render

    due = datetime.now(UTC) - timedelta(minutes=1)
    JobStore(tmp_path / "data" / "state").write(render([Job("a1b2c3", "desktop:plans", "Call Sam", "Call Sam",
                                                            At(due), due, due)]))
    cron = run_main(tmp_path, "cron", "run-due", "--standalone")
    assert cron.returncode == 1 and "Call Sam" in cron.stdout and "budget" in cron.stdout
    assert fake.requests == []

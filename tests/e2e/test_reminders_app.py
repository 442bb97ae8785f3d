"""A reminder in the real app on an X desktop with dunst: a job that came due while the app was closed runs
when it starts (within the grace), in its chat, and a real desktop notification names that chat; the
command line, handed to the running app, lists what is left. Screenshots land in tests/artifacts/."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.reminders.jobs import Job, JobStore, render
from desktop.scheduler.schedules import At, Cron
from desktop.session.session import SessionStore
from tests.e2e.conftest import make_home
from tests.e2e.xdesktop import AppProcess, Desktop, wait_for
from tests.fakeserver import FakeOpenAI

pytestmark = pytest.mark.e2e


async def _titled_chat(sessions: Path, key: str, title: str) -> None:
    store = SessionStore(sessions)
    session = await store.load(key)
    session.metadata["title"] = title
    await store.append(session, {"role": "user", "content": "Help me with the garden"},
                       {"role": "assistant", "content": "Happy to."})


def test_a_reminder_due_while_closed_runs_at_start_and_a_desktop_notification_names_its_chat(
        desktop: Desktop, model_server: FakeOpenAI, tmp_path: Path) -> None:
    home = make_home(tmp_path / "home", model_server)
    asyncio.run(_titled_chat(home / "data" / "sessions", "desktop:garden", "Garden"))
    due = datetime.now(UTC) - timedelta(minutes=10)
    JobStore(home / "data" / "state").write(render([
        Job("a1b2c3", "desktop:garden", "Remind the user to water the tomatoes", "Water", At(due), due, due),
        Job("d4e5f6", "desktop:garden", "Weekly seed order", "Seeds", Cron("0 9 * * 1", "UTC"), due,
            due + timedelta(days=3)),
    ]))
    model_server.add({"content": "Time to **water the tomatoes**!"})
    app = AppProcess(desktop, home)
    try:
        wait_for(lambda: 'string "Garden: Water"' in desktop.notifications_log(), 90, "the reminder's notification")
        assert 'string "Time to water the tomatoes!"' in desktop.notifications_log()  # plain text
        desktop.screenshot("e2e-reminder-notification")
        listed = app.launch("cron", "list")  # handed to the running app: its jobs
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("d4e5f6 · “Seeds” · Mondays at 09:00 (UTC) · next ")
        assert "Water" not in listed.stdout
        asked = [m for m in model_server.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
        assert "Remind the user to water the tomatoes" in asked
    finally:
        app.stop()

"""The Usage window on a running core: the period's totals, a bar a day with its tokens and cost by source on
hover, the chats and jobs that used most, today's unattended use against its budget, each new call as it is
counted, and the calls as CSV."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import time
from collections.abc import AsyncIterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from desktop.kernel import taskset
from desktop.kernel.work import Source
from desktop.ui.bridge import CoreBridge
from desktop.ui.usage.window import UsageWindow
from desktop.usage import Usage
from desktop.usage.days import FILE_NAME
from desktop.usage.records import CallRecord
from desktop.usage.report import midnight
from desktop.usage.settings import BudgetsConfig
from tests.fakeserver import FakeOpenAI
from tests.ui.chats.test_names import saved_by_an_earlier_run
from tests.ui.conftest import until
from tests.usage.test_counting import counts

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the window looks like there


def at(day: date) -> float:
    return min(midnight(day) + 3600 * 10, time.time() - 1)


@pytest.fixture
def today() -> date:
    """Read when the test starts, not at import: a run may cross midnight."""
    return date.today()


@pytest.fixture
def logged(home_dir: Path, today: date) -> None:
    """Calls of the last days, written before the app starts."""
    records = [CallRecord(at(today - timedelta(days=60)), Source.CHAT, "desktop:old", "openai/gpt-4o", 1, 1, 0, 1.0),
               CallRecord(at(today - timedelta(days=3)), Source.CHAT, "desktop:trip", "openai/gpt-4o", 4000, 400,
                          1000, 0.02),
               CallRecord(at(today - timedelta(days=3)), Source.HEARTBEAT, "system:heartbeat", "openai/gpt-4o",
                          9000, 100, 0, 0.025),
               CallRecord(at(today - timedelta(days=1)), Source.REMINDER, "desktop:trip", "openai/gpt-4o", 2000,
                          50, 0, 0.005),
               CallRecord(at(today), Source.CHAT, "quick:abc", "ollama_chat/llama3", 700, 70, 0, None)]
    path = home_dir / "data" / "usage.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))


@pytest.fixture
async def window(logged: None, bridge: CoreBridge, qtbot) -> AsyncIterator[UsageWindow]:  # type: ignore[no-untyped-def]
    trip = await bridge.core.sessions.load("desktop:trip")
    trip.metadata["title"] = "Trip plans"
    await bridge.core.sessions.append(trip, {"role": "user", "content": "Plan a trip"})
    made = UsageWindow(bridge.core.get(Usage), bridge)
    qtbot.addWidget(made)
    made.show()
    await until(lambda: made.totals.text() != "Counting…", message="the log is read and shown")
    yield made


def rows(window: UsageWindow, table: str) -> list[list[str]]:
    tree = getattr(window, table)
    return [[tree.topLevelItem(r).text(c) for c in range(3)] for r in range(tree.topLevelItemCount())]


async def test_the_last_30_days_by_day_source_chat_and_job(window: UsageWindow, bridge: CoreBridge, home_dir: Path,
                                                           fake: FakeOpenAI, tmp_path: Path, today: date) -> None:
    assert window.totals.text() == ("<b>Last 30 days</b>: 4 model calls, 16,320 tokens (1,000 of them read from "
                                    "cache), $0.0500")
    # Read from the log's end the first time; the per-day summary the later reads add up from is built behind it.
    await until(lambda: (home_dir / "data" / FILE_NAME).exists(), message="the per-day summary is built")
    assert rows(window, "chats") == [["Trip plans", "4,400", "$0.0200"], ["Deleted chat", "770", "—"]]
    assert rows(window, "jobs") == [["Heartbeat", "9,100", "$0.0250"], ["Reminders in “Trip plans”", "2,050",
                                                                         "$0.0050"]]
    three_days_ago = today - timedelta(days=3)
    assert window.chart.days[0] == today - timedelta(days=29) and window.chart.days[-1] == today
    assert window.chart.describe(three_days_ago).split("<br>")[1:] == [
        "<span style='color:#3b82f6'>■</span> chat: 4,400 tokens, $0.0200",
        "<span style='color:#ef4444'>■</span> heartbeat: 9,100 tokens, $0.0250"]
    assert window.budget.text().endswith(": 0 tokens (no daily budget set).")  # yesterday's reminder is not today's
    bridge.core.config.section(BudgetsConfig).unattended_daily_tokens = 50_000
    window.show_summary()
    assert window.budget.text().endswith(": 0 tokens of a budget of 50,000 tokens a day.")
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "usage-window.png"))

    fake.add({"content": "Counted.", "usage": counts(1000, 30)})
    await bridge.core.loop.ask("desktop:trip", "one more")
    await until(lambda: rows(window, "chats")[0][1] == "5,430", message="the new call is counted in the window")
    assert "5 model calls, 17,350 tokens" in window.totals.text()

    window.period.setCurrentIndex(3)  # the last year: the call of 60 days ago too
    await until(lambda: "6 model calls" in window.totals.text(), message="a year read")
    await window.export(tmp_path / "usage.csv")
    with (tmp_path / "usage.csv").open() as fh:
        exported = list(csv.DictReader(fh))
    assert [(r["source"], r["chat"], r["prompt_tokens"], r["cost_usd"]) for r in exported] == [
        ("chat", "desktop:old", "1", "1.000000"), ("chat", "desktop:trip", "4000", "0.020000"),
        ("heartbeat", "system:heartbeat", "9000", "0.025000"), ("reminder", "desktop:trip", "2000", "0.005000"),
        ("chat", "quick:abc", "700", ""), ("chat", "desktop:trip", "1000", "")]
    assert "Saved 6 calls" in window.notice.label.text()


@pytest.fixture
def logged_by_chat(home_dir: Path, today: date) -> None:
    """Calls of three chats, written before the app starts: one titled, one saved without a title, one deleted."""
    records = [CallRecord(at(today), Source.CHAT, "desktop:trip", "openai/gpt-4o", 3000, 0, 0, None),
               CallRecord(at(today), Source.CHAT, "desktop:bare", "openai/gpt-4o", 2000, 0, 0, None),
               CallRecord(at(today), Source.CHAT, "quick:gone", "openai/gpt-4o", 1000, 0, 0, None),
               CallRecord(at(today), Source.REMINDER, "desktop:trip", "openai/gpt-4o", 500, 0, 0, None)]
    path = home_dir / "data" / "usage.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))


async def test_chats_are_named_by_their_saved_titles_never_by_their_keys(
        logged_by_chat: None, bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Chats saved by an earlier run of the app (none of them loaded now) by their titles as the chat list shows
    them, one saved before it got a title and one that is gone in words, as the Reminders window says them."""
    await saved_by_an_earlier_run(bridge)
    window = UsageWindow(bridge.core.get(Usage), bridge)
    qtbot.addWidget(window)
    window.resize(900, 620)
    window.show()
    await until(lambda: window.totals.text() != "Counting…", message="the log is read and shown")
    assert bridge.session_title("desktop:trip") == "desktop:trip"  # not loaded: only its file knows its title
    assert [row[0] for row in rows(window, "chats")] == ["Trip plans", "Untitled chat", "Deleted chat"]
    assert [row[0] for row in rows(window, "jobs")] == ["Reminders in “Trip plans”"]
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "usage-chats-by-title.png"))


async def test_budgets_have_their_page_in_settings_and_saving_it_holds_unattended_work(shell) -> None:  # type: ignore[no-untyped-def]
    from desktop.ui.settings import SettingsWindow
    from tests.ui.test_settings import save

    shell.open_window("settings")
    window = shell.window("settings")
    assert isinstance(window, SettingsWindow)
    assert window.show_page("Budgets")  # it has its page, named in the list on the left
    # showing it reads config.yaml: a read of the test's own beside it could land after the value was set and put
    # it back (so the save changed nothing); the window's own read, ended, is the one to wait for
    await until(lambda: not taskset.pending(), message="the settings read when the window showed")
    window.rows["budgets.unattended_daily_tokens"].widget.setValue(20000)
    assert "Saved" in await save(window)
    assert shell.core.config.section(BudgetsConfig).unattended_daily_tokens == 20000
    assert "unattended_daily_tokens: 20000" in shell.core.settings.path.read_text(encoding="utf-8")


async def test_a_period_chosen_while_a_longer_one_is_still_counted_is_the_one_shown(
        home_dir: Path, bridge: CoreBridge, qtbot, today: date) -> None:  # type: ignore[no-untyped-def]
    """Last year, then at once Last 7 days: the year, read longer, must not land under the week's label."""
    year_ago = at(today - timedelta(days=300))
    line = json.dumps(CallRecord(year_ago, Source.CHAT, "desktop:old", "openai/gpt-4o", 10, 1, 0, None).to_json())
    path = home_dir / "data" / "usage.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((line + "\n") * 60_000 + json.dumps(
        CallRecord(at(today), Source.CHAT, "desktop:new", "openai/gpt-4o", 5, 5, 0, None).to_json()) + "\n")
    window = UsageWindow(bridge.core.get(Usage), bridge)
    qtbot.addWidget(window)
    window.period.setCurrentIndex(0)
    window.show()
    await until(lambda: window.totals.text() != "Counting…" and not taskset.pending(), message="the week is shown")
    (home_dir / "data" / FILE_NAME).unlink(missing_ok=True)  # no summary yet: the year is read from the log
    window.period.setCurrentIndex(3)
    await asyncio.sleep(0.01)  # the year's reading has begun
    window.period.setCurrentIndex(0)
    await until(lambda: not taskset.pending(), message="both periods are counted")
    assert window.totals.text().startswith("<b>Last 7 days</b>: 1 model calls, 10 tokens"), window.totals.text()

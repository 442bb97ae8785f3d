"""`nanobot-tray usage`: the totals of the last N local days from the usage log, by source and by day, exactly
as the issue names the JSON; no model, no running app needed."""

from __future__ import annotations

import json
import time
from datetime import date, timedelta
from pathlib import Path

from desktop.kernel.work import Source
from desktop.usage.records import CallRecord
from desktop.usage.report import midnight
from tests.cli.in_process import run_main
from tests.cli.test_cli import run_cli


def write_log(home: Path, *records: CallRecord) -> None:
    path = home / "data" / "usage.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))


def call(day: date, source: Source, prompt: int, completion: int, cached: int = 0, cost: float | None = None,
         session: str = "desktop:a") -> CallRecord:
    at = min(midnight(day) + 3600, time.time() - 1)
    return CallRecord(at, source, session, "openai/gpt-4o-mini", prompt, completion, cached, cost)


def test_json_totals_each_source_and_day_exactly(tmp_path: Path) -> None:
    today = date.today()  # read in the test, not at import: a run may cross midnight
    yesterday_ = today - timedelta(days=1)
    write_log(tmp_path,
              call(today - timedelta(days=40), Source.CHAT, 9999, 999),  # before the last 2 days: left out
              call(yesterday_, Source.CHAT, 1000, 100, 400, 0.25),
              call(yesterday_, Source.HEARTBEAT, 500, 5, 0, 0.5, "system:heartbeat"),
              call(today, Source.CHAT, 2000, 200, 1000, None),  # a call with no known price
              call(today, Source.REMINDER, 300, 30, 0, 0.125))
    result = run_main(tmp_path, "usage", "--days", "2", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    day, yesterday = today.isoformat(), yesterday_.isoformat()
    total = report["total"]
    assert {k: total[k] for k in ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")} == {
        "prompt_tokens": 3800, "completion_tokens": 335, "cached_tokens": 1400, "cost_usd": 0.875}
    assert total["by_day"][yesterday]["prompt_tokens"] == 1500 and total["by_day"][day]["cost_usd"] == 0.125
    assert list(report["by_source"]) == ["chat", "reminder", "heartbeat", "subagent", "dream", "consolidation"]
    chat = report["by_source"]["chat"]
    assert (chat["prompt_tokens"], chat["completion_tokens"], chat["cached_tokens"], chat["cost_usd"]) == (
        3000, 300, 1400, 0.25)
    assert chat["by_day"][day]["cost_usd"] is None and chat["by_day"][yesterday]["cost_usd"] == 0.25
    assert report["by_source"]["dream"] == {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                            "cached_tokens": 0, "cost_usd": None, "estimated_calls": 0,
                                            "by_day": {}}


def test_the_table_and_the_mistakes(tmp_path: Path) -> None:
    today = date.today()
    empty = run_main(tmp_path, "usage")
    assert empty.returncode == 0 and empty.stdout == "No model calls the last 30 days " \
        f"(since {today - timedelta(days=29):%a %Y-%m-%d}).\n"
    write_log(tmp_path, call(today, Source.CHAT, 1234, 56, 0, None), call(today, Source.DREAM, 100, 10, 0, 0.5))
    result = run_cli(tmp_path, "usage", "--days", "1")  # a process of its own, as a user runs it
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Model calls today:"
    assert lines[3].split() == ["chat", "1", "1,234", "0", "56", "-"]
    assert lines[4].split() == ["dream", "1", "100", "0", "10", "$0.5000"]
    assert lines[5].split() == ["total", "2", "1,334", "0", "66", "$0.5000"]
    wrong = run_main(tmp_path, "usage", "--days", "0")
    assert wrong.returncode == 2 and "the number of days must be at least 1" in wrong.stderr


def test_a_number_of_days_reaching_before_the_calendar_is_refused_not_a_traceback(tmp_path: Path) -> None:
    """--days 1000000 (a slip, or "everything") ended in an OverflowError traceback: no date lies that far back."""
    for days in ("1000000", "100000000000"):
        wrong = run_main(tmp_path, "usage", "--days", days)
        assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
        assert "the number of days must be at most 36500 (100 years)" in wrong.stderr
    assert run_main(tmp_path, "usage", "--days", "36500").returncode == 0


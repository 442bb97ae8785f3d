"""The per-day summary beside the usage log: `nanobot-tray usage` (and the Usage window) add a period up from it
and the log's newest lines, and it follows the log whatever happens to it: new calls, a line torn by a crash, a
log replaced or cut, a summary file broken. The log itself is never rewritten."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from desktop.kernel.work import Source
from desktop.usage.days import FILE_NAME
from desktop.usage.records import UsageLog
from tests.cli.in_process import run_main
from tests.usage.test_command import call, write_log


def report(home: Path) -> dict[str, Any]:
    result = run_main(home, "usage", "--days", "30", "--json")
    assert result.returncode == 0, result.stderr
    total: dict[str, Any] = json.loads(result.stdout)["total"]
    return total


def prompt_by_day(home: Path) -> dict[str, int]:
    return {day: totals["prompt_tokens"] for day, totals in report(home)["by_day"].items()}


async def test_new_calls_count_and_a_torn_line_costs_only_itself(tmp_path: Path) -> None:
    today, earlier = date.today(), date.today() - timedelta(days=3)
    log_path = tmp_path / "data" / "usage.jsonl"
    write_log(tmp_path, call(earlier, Source.CHAT, 1000, 10), call(today, Source.HEARTBEAT, 200, 2))
    written = log_path.read_bytes()
    assert prompt_by_day(tmp_path) == {earlier.isoformat(): 1000, today.isoformat(): 200}
    assert (tmp_path / "data" / FILE_NAME).is_file() and log_path.read_bytes() == written  # beside, not in, the log

    with log_path.open("ab") as fh:  # a crash in the middle of a line
        fh.write(b'{"at": 1, "source": "chat", "session": "desktop:a", "model": "m", "pro')
    assert prompt_by_day(tmp_path) == {earlier.isoformat(): 1000, today.isoformat(): 200}

    log = UsageLog(log_path.parent)  # the app's writer, after the crash
    log.add(call(today, Source.CHAT, 30, 3))
    await log.flush()
    assert prompt_by_day(tmp_path) == {earlier.isoformat(): 1000, today.isoformat(): 230}
    assert report(tmp_path)["calls"] == 3
    for line in log_path.read_bytes().splitlines()[:2] + log_path.read_bytes().splitlines()[3:]:
        json.loads(line)  # still one JSON object a line, for any reader of the log


def test_a_replaced_log_or_a_broken_summary_is_read_afresh(tmp_path: Path) -> None:
    today = date.today()
    write_log(tmp_path, call(today, Source.CHAT, 1000, 10), call(today, Source.CHAT, 2000, 20))
    assert report(tmp_path)["prompt_tokens"] == 3000
    write_log(tmp_path, call(today, Source.DREAM, 7, 1, session=""))  # a log restored from elsewhere: shorter
    assert report(tmp_path)["prompt_tokens"] == 7
    write_log(tmp_path, call(today, Source.DREAM, 8, 1, session=""))  # as long, other numbers
    assert report(tmp_path)["prompt_tokens"] == 8
    summary = tmp_path / "data" / FILE_NAME
    summary.write_text('{"version": 1, "groups": [[')
    assert report(tmp_path)["prompt_tokens"] == 8
    assert json.loads(summary.read_text())["version"] == 1  # saved whole again


def test_a_line_broken_by_hand_with_impossible_numbers_costs_only_itself(tmp_path: Path) -> None:
    """Numbers no call can have (a time or a count past any float, not a number at all) are a broken line like
    any other: skipped, the rest still counted, the report still printed."""
    today = date.today()
    write_log(tmp_path, call(today, Source.CHAT, 1000, 10))
    good = json.dumps(call(today, Source.CHAT, 20, 2).to_json())
    with (tmp_path / "data" / "usage.jsonl").open("a") as fh:
        for field, value in (("at", "1e400"), ("at", "NaN"), ("prompt", "1e400"), ("cost", "NaN"),
                             ("cost", "Infinity"), ("prompt", "-5")):
            fh.write(good.replace(f'"{field}": ', f'"{field}": {value}, "was": ', 1) + "\n")
    result = run_main(tmp_path, "usage", "--days", "30", "--json")
    assert result.returncode == 0, result.stderr
    total = json.loads(result.stdout)["total"]
    assert (total["calls"], total["prompt_tokens"], total["cost_usd"]) == (1, 1000, None)

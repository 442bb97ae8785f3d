"""Reminders benchmark: idle CPU of a running core over 60 s with 100 saved reminder jobs and the heartbeat
on (every minute here, so it comes due during the measurement, reads HEARTBEAT.md, finds no task and
calls no model).

Run: python tests/bench/bench_reminders.py [--seconds 60] [--json]
The running app (Qt shell, tray, QTimer scheduler) under the same load: tests/bench/bench_idle_app.py.
Target (issue 9): <= 0.2 % of one core.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.reminders import Reminders
from desktop.scheduler import Scheduler
from tests.bench.figures import Figures  # noqa: E402

JOBS = 100


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def prepare(root: Path) -> None:
    """A home with a model that is never reached, 100 jobs (none due within the hour) and a 1-min heartbeat."""
    from desktop.reminders.jobs import Job, JobStore, render
    from desktop.scheduler.schedules import At, Cron, Every

    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text("model: openai/test\napi_base: http://127.0.0.1:9/v1\n"
                                      "schedules: {heartbeat_interval: 60}\n", encoding="utf-8")
    now = datetime.now(UTC)
    jobs = []
    for i in range(JOBS):
        kind = [At(now + timedelta(hours=2, minutes=i)), Every(3600 + 60 * i, now),
                Cron(f"{i % 60} {i % 24} * * *", "UTC")][i % 3]
        jobs.append(Job(f"job{i:03}", "desktop:bench", f"job {i}", f"job {i}", kind, now,
                        now + timedelta(hours=1, minutes=i)))
    JobStore(root / "data" / "state").write(render(jobs))


async def measure(seconds: float) -> tuple[float, int, bool]:
    from desktop.core import build_core

    core = await asyncio.to_thread(build_core)
    await core.start()
    heartbeat = next(e for e in core.get(Scheduler).entries if e.name == "heartbeat")
    started = heartbeat.anchor  # type: ignore[attr-defined]
    await asyncio.sleep(1.0)  # settle after start
    began_cpu, began = cpu_seconds(), time.monotonic()
    await asyncio.sleep(seconds)
    used = cpu_seconds() - began_cpu
    jobs = len(core.get(Reminders).jobs)
    beat = heartbeat.anchor != started  # type: ignore[attr-defined]
    await core.close()
    return used / (time.monotonic() - began) * 100, jobs, beat


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NANOBOT_TRAY_HOME"] = tmp
        prepare(Path(tmp))
        percent, jobs, beat = asyncio.run(measure(args.seconds))
    print(f"idle core, {jobs} reminder jobs + heartbeat every 60 s: {percent:.3f} % of one core over "
          f"{args.seconds:.0f} s (heartbeat {'ran, no task, no model call' if beat else 'did not come due'})")
    if args.json:
        figures = Figures()
        figures.add(f"Idle CPU, headless core, {jobs} jobs + heartbeat, over {args.seconds:.0f} s",
                    f"{percent:.3f} % of a core", "≤ 0.2 %")
        print(figures.line())


if __name__ == "__main__":
    main()

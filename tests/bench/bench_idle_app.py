"""Idle CPU of the running app: the real tray app (`python -m desktop`: Qt shell, tray, the QTimer scheduler
under qasync, every window it opens at start) with 100 saved reminder jobs and the heartbeat on, watched from
outside over 60 s. The heartbeat runs every minute here so it comes due during the measurement; HEARTBEAT.md
has no task, so it calls no model.

Run: python tests/bench/bench_idle_app.py [--seconds 60] [--display auto|xvfb|offscreen] [--json]
Target (issue 9): <= 0.2 % of one core (the process's CPU time, every thread, over the wall time).
With --display xvfb (auto: when Xvfb, trayer and dunst are installed) the app runs on a private X desktop
with a tray host, as on a real desktop; offscreen it has no tray, so it opens the chat window instead.
The headless core under the same load: tests/bench/bench_reminders.py.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_reminders import JOBS, prepare  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.e2e.xdesktop import Desktop, missing_tools  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system time of every thread of the process, from /proc (the app is not our child's rusage yet)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def wait_log(log: Path, pattern: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not (log.exists() and re.search(pattern, log.read_text(errors="replace"))):
        if proc.poll() is not None:
            raise SystemExit(f"the app exited ({proc.returncode}) before logging {pattern!r}")
        if time.monotonic() > deadline:
            raise SystemExit(f"the app did not log {pattern!r} within {timeout:.0f} s")
        time.sleep(0.2)


def measure(root: Path, seconds: float, display: str) -> tuple[float, float, float, int, str]:
    """CPU % of one core while idle, its resolution (one clock tick over the window), the CPU seconds start-up
    took, the model calls during the window, and where the app ran."""
    with ExitStack() as stack:
        fake = stack.enter_context(FakeOpenAI())
        home = root / "home"
        prepare(home)
        config = home / "config.yaml"
        config.write_text(config.read_text().replace("http://127.0.0.1:9/v1", fake.base_url), encoding="utf-8")
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "DISPLAY", "WAYLAND_DISPLAY",
                                                                 "DBUS_SESSION_BUS_ADDRESS", "QT_QPA_PLATFORM")}
        env.update(XDG_RUNTIME_DIR=str(runtime), HOME=str(root / "user"), QT_QPA_PLATFORM="offscreen")
        if display == "xvfb":
            desktop = Desktop(root / "desktop").start()
            stack.callback(desktop.stop)
            env = {**desktop.env}
        env.update(NANOBOT_TRAY_HOME=str(home), PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True",
                   PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
        app = subprocess.Popen([sys.executable, "-m", "desktop"], env=env, cwd=str(REPO), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_log(home / "data" / "logs" / "nanobot-tray.log", r"agent ready", app, 180)
            time.sleep(5)  # settle after start-up
            requests = len(fake.requests)
            began_cpu, began = cpu_seconds(app.pid), time.monotonic()
            time.sleep(seconds)
            used = cpu_seconds(app.pid) - began_cpu
            wall = time.monotonic() - began
            if app.poll() is not None:
                raise SystemExit(f"the app exited ({app.returncode}) during the measurement")
            calls = len(fake.requests) - requests
        finally:
            app.send_signal(signal.SIGTERM)
            try:
                app.wait(30)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait(10)
        where = "Xvfb + trayer + dunst" if display == "xvfb" else "offscreen, no tray"
        return used / wall * 100, 100 / TICKS / wall, began_cpu, calls, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--display", choices=("auto", "xvfb", "offscreen"), default="auto")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    display = args.display
    if display == "auto":
        display = "offscreen" if missing_tools("trayer") else "xvfb"
    with tempfile.TemporaryDirectory(prefix="bench-idle-app-") as tmp:
        percent, resolution, start_cpu, calls, where = measure(Path(tmp), args.seconds, display)
    shown = f"{percent:.3f} %" if percent else f"< {resolution:.3f} % (no clock tick)"
    print(f"idle app ({where}), {JOBS} reminder jobs + heartbeat every 60 s: {shown} of one core over "
          f"{args.seconds:.0f} s (target <= 0.2 %); model calls meanwhile: {calls}")
    print(f"  start-up to agent ready used {start_cpu:.1f} s of CPU; load average {os.getloadavg()[0]:.1f}")
    if args.json:
        figures = Figures()
        figures.add(f"Idle CPU, running app ({where}), {JOBS} jobs + heartbeat, over {args.seconds:.0f} s",
                    f"{shown} of a core", "≤ 0.2 %")
        print(figures.line())


if __name__ == "__main__":
    main()

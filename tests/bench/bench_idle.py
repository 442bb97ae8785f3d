"""Memory of the running tray app as its whole process tree, measured as PSS, at rest and after one turn.

Run: python tests/bench/bench_idle.py [--minutes 10] [--settle 20] [--display auto|xvfb|offscreen] [--json]
The real app (`python -m desktop`) runs in an isolated home with 100 reminder jobs and the heartbeat
(tests/bench/bench_reminders.py's), three stdio MCP servers (our tests/mcp/server.py) and the scripted model
server (tests/fakeserver.py) as its model; on a private X desktop with a tray host (Xvfb + trayer + dunst) when
those are installed, else offscreen.
Figures (issue 26):
  tree PSS at rest after start, no turn yet   (≤ 120 MB)  once the core is ready, the MCP servers are up, `--settle`
                                                          seconds have passed and the figure has stopped moving
  one turn: `agent -m hi`, forwarded into the running app (desktop/cli/remote.py) and answered by the scripted model
  tree PSS 3 min after that turn              (≤ 150 MB)  sampled every 5 s for `--minutes`; the last sample too
  the MCP servers' own PSS, reported on its own (their memory is the servers', not the app's)
  each other child process's PSS by its command line (the model helper, `--model-helper`, named as such)
A plot of the samples (tree PSS against minutes since the turn, with the two target lines) is written by hand as
SVG to tests/bench/idle_tree.svg.

Why PSS over the tree: RSS of the app process alone would fall as soon as memory moves into a helper process
(litellm in a model helper), without the user's machine holding any less. PSS (/proc/PID/smaps_rollup) counts
every process's private pages whole and divides pages shared between processes (the Python and Qt libraries
mapped by the app and its helper) among them, so the sum over the tree is what the app costs, counted once.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_reminders import JOBS, prepare  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.e2e.xdesktop import DIE_WITH_US, Desktop, missing_tools  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

MCP_SERVER = REPO / "tests" / "mcp" / "server.py"
MCP_COUNT = 3
SAMPLE_EVERY = 5.0  # seconds between samples after the turn
AFTER_TURN = 3.0  # minutes after the turn at which the "a few minutes after" figure is read
IDLE_TARGET, TURN_TARGET = 120.0, 150.0  # MB
PLOT = Path(__file__).resolve().parent / "idle_tree.svg"
HELPER_FLAG = "--model-helper"


# ----- the process tree and its PSS
def children_map() -> dict[int, list[int]]:
    """Every process's children, from /proc/*/stat (the parent pid is the field after the state)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # exited meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    return children


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def pss_mb(pid: int) -> float:
    """The process's proportional set size in MB; 0 when it has exited meanwhile."""
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0.0
    found = re.search(r"^Pss:\s+(\d+) kB", rollup, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else 0.0


@dataclass
class Sample:
    tree: float  # MB: the app and every descendant that is not an MCP server
    mcp: float  # MB: the MCP server processes and their own descendants
    mcp_count: int
    parts: list[tuple[str, float]]  # the tree's processes: (what it is, MB), the app first


def describe(pid: int, root: int) -> str:
    line = command_line(pid)
    if pid == root:
        return "app"
    if HELPER_FLAG in line.split():
        return f"model helper: {shorten(line)}"
    return f"child: {shorten(line)}"


def shorten(line: str, width: int = 70) -> str:
    line = line.replace(sys.executable, "python").replace(str(REPO) + "/", "")
    return line if len(line) <= width else line[:width - 1] + "…"


def sample(root: int) -> Sample:
    """One reading of the tree under `root`: MCP servers (by their command line) and what they start go apart."""
    children = children_map()
    tree, mcp, count, parts = 0.0, 0.0, 0, []
    stack = [(root, False)]
    while stack:
        pid, under_mcp = stack.pop()
        is_mcp = under_mcp or str(MCP_SERVER) in command_line(pid)
        value = pss_mb(pid)
        if is_mcp:
            mcp += value
            count += not under_mcp
        else:
            tree += value
            parts.append((describe(pid, root), value))
        stack.extend((child, is_mcp) for child in children.get(pid, []))
    return Sample(tree, mcp, count, parts)


# ----- the app
def wait_until(check: Callable[[], bool], app: subprocess.Popen[bytes], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if app.poll() is not None:
            raise SystemExit(f"the app exited ({app.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def configure(home: Path, fake: FakeOpenAI) -> None:
    """bench_reminders' home (100 jobs, a 1-min heartbeat) with the scripted model and three stdio MCP servers."""
    prepare(home)
    config = home / "config.yaml"
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    settings.update(api_base=fake.base_url,
                    mcp={"servers": {f"s{i}": {"command": sys.executable, "args": [str(MCP_SERVER)], "timeout": 30}
                                     for i in range(MCP_COUNT)}})
    config.write_text(yaml.safe_dump(settings), encoding="utf-8")


def settled(root: int, app: subprocess.Popen[bytes], timeout: float = 60.0) -> Sample:
    """The tree once its PSS has stopped moving: two readings 5 s apart within 1 MB (bounded by `timeout`)."""
    deadline = time.monotonic() + timeout
    before = sample(root)
    while True:
        time.sleep(5)
        now = sample(root)
        if app.poll() is not None:
            raise SystemExit(f"the app exited ({app.returncode}) while settling")
        if abs(now.tree - before.tree) < 1.0 or time.monotonic() > deadline:
            return now
        before = now


def one_turn(env: dict[str, str]) -> tuple[float, float, str]:
    """`agent -m hi` with the app running: wall seconds, the client's peak RSS (MB), and its answer."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        began = time.monotonic()
        client = subprocess.Popen([*DIE_WITH_US, sys.executable, "-m", "desktop", "agent", "-m", "hi"], env=env,
                                  cwd=str(REPO), stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        try:
            _, status, usage = os.wait4(client.pid, 0)
        except BaseException:
            client.kill()
            raise
        wall = time.monotonic() - began
        client.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        answer = out.read().decode(errors="replace").strip()
        if client.returncode != 0 or "echo" not in answer:
            raise SystemExit(f"`agent -m hi` failed (exit {client.returncode}):\n{answer}\n"
                             f"{err.read().decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024, answer


@dataclass
class Run:
    where: str
    idle: Sample
    turn_wall: float
    client_rss: float
    samples: list[tuple[float, Sample]]  # (minutes since the turn ended, reading)


def measure(root: Path, minutes: float, settle: float, display: str) -> Run:
    with ExitStack() as stack:
        fake = stack.enter_context(FakeOpenAI())
        home = root / "home"
        configure(home, fake)
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
        app = subprocess.Popen([*DIE_WITH_US, sys.executable, "-m", "desktop"], env=env, cwd=str(REPO),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def stop() -> None:
            app.send_signal(signal.SIGTERM)
            try:
                app.wait(30)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait(10)
        stack.callback(stop)
        log = home / "data" / "logs" / "nanobot-tray.log"
        wait_until(lambda: log.exists() and "core ready" in log.read_text(errors="replace"), app, 180,
                   "the app logged core ready")
        wait_until(lambda: sample(app.pid).mcp_count >= MCP_COUNT, app, 60, f"{MCP_COUNT} MCP server processes")
        time.sleep(settle)
        idle = settled(app.pid, app)
        requests = len(fake.requests)
        wall, client_rss, _answer = one_turn(env)
        if len(fake.requests) == requests:
            raise SystemExit("`agent -m hi` answered without asking the scripted model")
        turned = time.monotonic()
        samples = []
        for i in range(int(minutes * 60 / SAMPLE_EVERY) + 1):
            time.sleep(max(0.0, turned + i * SAMPLE_EVERY - time.monotonic()))
            if app.poll() is not None:
                raise SystemExit(f"the app exited ({app.returncode}) {i * SAMPLE_EVERY:.0f} s after the turn")
            samples.append(((time.monotonic() - turned) / 60, sample(app.pid)))
    where = "Xvfb + trayer + dunst" if display == "xvfb" else "offscreen, no tray"
    return Run(where, idle, wall, client_rss, samples)


# ----- the plot
def plot(samples: list[tuple[float, float]], minutes: float, path: Path) -> None:
    """Tree PSS (MB) against minutes since the turn, with the two targets dashed: a small SVG, by hand."""
    width, height, left, right, top, bottom = 640, 340, 58, 20, 34, 46
    top_mb = max(TURN_TARGET, *(mb for _, mb in samples)) * 1.1
    y_step = 50 if top_mb <= 400 else 100
    top_mb = math.ceil(top_mb / y_step) * y_step
    span = max(minutes, samples[-1][0], 0.1)
    x_step = next(step for step in (0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, math.inf) if span / step <= 10)

    def x(minute: float) -> float:
        return left + (width - left - right) * minute / span

    def y(mb: float) -> float:
        return height - bottom - (height - top - bottom) * mb / top_mb

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">Process-tree PSS of the idle app '
             f'after one turn (MCP servers apart)</text>']
    for mb in range(0, int(top_mb) + 1, y_step):
        parts.append(f'<line x1="{left}" y1="{y(mb):.1f}" x2="{width - right}" y2="{y(mb):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{y(mb) + 4:.1f}" text-anchor="end">{mb}</text>')
    minute = 0.0
    while minute <= span + 1e-9:
        parts.append(f'<text x="{x(minute):.1f}" y="{height - bottom + 16}" text-anchor="middle">{minute:g}</text>')
        minute += x_step
    parts += [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>',
              f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
              f'<text x="{(left + width - right) / 2}" y="{height - 10}" text-anchor="middle">minutes since the '
              f'turn</text>',
              f'<text x="16" y="{(top + height - bottom) / 2}" text-anchor="middle" '
              f'transform="rotate(-90 16 {(top + height - bottom) / 2})">PSS, MB</text>']
    for target, label in ((IDLE_TARGET, "target at rest, no turn"), (TURN_TARGET, "target after a turn")):
        parts.append(f'<line x1="{left}" y1="{y(target):.1f}" x2="{width - right}" y2="{y(target):.1f}" '
                     f'stroke="#2a7" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{width - right - 4}" y="{y(target) - 4:.1f}" text-anchor="end" fill="#2a7">'
                     f'{label}: {target:.0f} MB</text>')
    points = " ".join(f"{x(m):.1f},{y(mb):.1f}" for m, mb in samples)
    parts += [f'<polyline points="{points}" fill="none" stroke="#c33" stroke-width="2"/>', "</svg>", ""]
    path.write_text("\n".join(parts), encoding="utf-8")


# ----- output
def at(samples: list[tuple[float, Sample]], minute: float) -> tuple[float, Sample]:
    return min(samples, key=lambda s: abs(s[0] - minute))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to sample after the turn")
    parser.add_argument("--settle", type=float, default=20.0, help="seconds at rest after start before measuring")
    parser.add_argument("--display", choices=("auto", "xvfb", "offscreen"), default="auto")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    display = args.display
    if display == "auto":
        display = "offscreen" if missing_tools("trayer") else "xvfb"
    with tempfile.TemporaryDirectory(prefix="bench-idle-tree-") as tmp:
        run = measure(Path(tmp), args.minutes, args.settle, display)
    plot([(m, s.tree) for m, s in run.samples], args.minutes, PLOT)
    after_min, after = at(run.samples, min(AFTER_TURN, args.minutes))
    last_min, last = run.samples[-1]
    peak = max(s.tree for _, s in run.samples)
    print(f"process-tree PSS of the running app ({run.where}), {JOBS} reminder jobs + heartbeat, "
          f"{MCP_COUNT} stdio MCP servers")
    print(f"  at rest after start, no turn yet:   {run.idle.tree:6.1f} MB   (target ≤ {IDLE_TARGET:.0f} MB)")
    for what, mb in run.idle.parts:
        print(f"    {mb:6.1f} MB  {what}")
    print(f"    MCP servers ({run.idle.mcp_count}), apart:  {run.idle.mcp:6.1f} MB")
    print(f"  one turn, `agent -m hi` forwarded into the app: {run.turn_wall:.2f} s "
          f"(client peak RSS {run.client_rss:.0f} MB)")
    print(f"  {after_min:.1f} min after the turn:           {after.tree:6.1f} MB   (target ≤ {TURN_TARGET:.0f} MB)")
    print(f"  last sample, {last_min:.1f} min after the turn:  {last.tree:6.1f} MB;  peak {peak:.1f} MB over "
          f"{len(run.samples)} samples every {SAMPLE_EVERY:.0f} s")
    for what, mb in last.parts:
        print(f"    {mb:6.1f} MB  {what}")
    print(f"    MCP servers ({last.mcp_count}), apart:  {last.mcp:6.1f} MB")
    print(f"  plot: {PLOT.relative_to(REPO)}; load average {os.getloadavg()[0]:.1f}")
    if args.json:
        figures = Figures()
        figures.add(f"Tree PSS at rest after start, no turn ({JOBS} jobs, heartbeat, {MCP_COUNT} MCP servers apart)",
                    f"{run.idle.tree:.0f} MB", f"≤ {IDLE_TARGET:.0f} MB")
        figures.add(f"Tree PSS {after_min:.1f} min after one turn", f"{after.tree:.0f} MB", f"≤ {TURN_TARGET:.0f} MB")
        figures.add(f"Tree PSS at the last sample, {last_min:.1f} min after the turn (plot: tests/bench/idle_tree.svg)",
                    f"{last.tree:.0f} MB (peak {peak:.0f} MB)")
        helpers = [mb for what, mb in last.parts if what.startswith("model helper")]
        if helpers:
            figures.add("Model helper process PSS at the last sample", f"{sum(helpers):.0f} MB")
        figures.add(f"{MCP_COUNT} stdio MCP servers' own PSS (not in the tree figures)", f"{last.mcp:.0f} MB")
        print(figures.line())


if __name__ == "__main__":
    main()

"""Memory of the running app at rest: the whole process tree's PSS (proportional set size, so pages shared between
the app and its helpers count once), read from /proc/<pid>/smaps_rollup of the app and every descendant.

Run: python tests/bench/bench_idle.py [--after 120] [--display auto|xvfb|offscreen] [--json]
The real tray app (`python -m desktop`) in a scratch home with 100 saved reminder jobs, the heartbeat every minute
(it reads HEARTBEAT.md, finds no task, calls no model) and three stdio MCP servers (tests/mcp/server.py), against
the scripted model server (tests/fakeserver.py). Figures, printed (issue 26's targets beside them):
  after start, no turn yet          the app and its helpers, MCP servers apart   (target ≤ 120 MB)
  after one turn                    `nanobot-tray agent -m hi`, answered by the running app
  --after seconds after that turn   (target ≤ 150 MB a few minutes after the last turn)
With --display xvfb (auto: when Xvfb and trayer are installed) the app docks in a tray on a private X desktop and
opens no window; offscreen it has no tray and opens the chat window, as it does on a desktop without one.
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
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_idle_app import wait_log  # noqa: E402
from tests.bench.bench_reminders import JOBS, prepare  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.e2e.xdesktop import Desktop, missing_tools  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

MCP_SERVER = REPO / "tests" / "mcp" / "server.py"
MCP_COUNT = 3
SETTLE = 5.0  # seconds after each step before reading memory


@dataclass
class Tree:
    """PSS in MB: the app process, its other descendants (helpers), and the MCP servers with their descendants."""

    app: float
    helpers: float
    mcp: float
    mcp_processes: int

    @property
    def ours(self) -> float:
        return self.app + self.helpers


def pss_mb(pid: int) -> float:
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0  # it ended meanwhile
    return int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1)) / 1024  # type: ignore[union-attr]


def children() -> dict[int, list[int]]:
    """Every process's children, from the parent field of /proc/<pid>/stat."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            continue
        tree.setdefault(parent, []).append(int(entry.name))
    return tree


def descendants(pid: int, tree: dict[int, list[int]]) -> list[int]:
    found, stack = [], list(tree.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(tree.get(child, []))
    return found


def is_mcp(pid: int) -> bool:
    try:
        return str(MCP_SERVER).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return False


def read_tree(app: int) -> Tree:
    tree = children()
    mcp_roots = [p for p in tree.get(app, []) if is_mcp(p)]
    mcp = [p for root in mcp_roots for p in (root, *descendants(root, tree))]
    helpers = [p for p in descendants(app, tree) if p not in mcp]
    return Tree(pss_mb(app), sum(map(pss_mb, helpers)), sum(map(pss_mb, mcp)), len(mcp_roots))


def configure(home: Path, base_url: str) -> None:
    prepare(home)
    config = home / "config.yaml"
    servers = "".join(f"    s{i}: {{command: {sys.executable}, args: [{MCP_SERVER}], timeout: 30}}\n"
                      for i in range(MCP_COUNT))
    config.write_text(config.read_text().replace("http://127.0.0.1:9/v1", base_url) + "mcp:\n  servers:\n"
                      + servers, encoding="utf-8")


def measure(root: Path, after: float, display: str) -> list[tuple[str, Tree]]:
    with ExitStack() as stack:
        fake = stack.enter_context(FakeOpenAI())
        home = root / "home"
        configure(home, fake.base_url)
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "DISPLAY", "WAYLAND_DISPLAY",
                                                                 "DBUS_SESSION_BUS_ADDRESS", "QT_QPA_PLATFORM")}
        env.update(XDG_RUNTIME_DIR=str(runtime), HOME=str(root / "user"), QT_QPA_PLATFORM="offscreen")
        if display == "xvfb":
            desktop = Desktop(root / "desktop").start()
            stack.callback(desktop.stop)
            env = {**desktop.env}
        env.update(NANOBOT_TRAY_HOME=str(home), PYTHONPATH=str(REPO), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
        app = subprocess.Popen([sys.executable, "-m", "desktop"], env=env, cwd=str(REPO), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_log(home / "data" / "logs" / "nanobot-tray.log", r"agent ready", app, 180)
            deadline = time.monotonic() + 60
            while read_tree(app.pid).mcp_processes < MCP_COUNT:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the app did not start {MCP_COUNT} MCP servers within 60 s")
                time.sleep(0.2)
            time.sleep(SETTLE)
            figures = [("after start, no turn yet", read_tree(app.pid))]
            turn = subprocess.run([sys.executable, "-m", "desktop", "agent", "-m", "hi"], env=env, cwd=str(REPO),
                                  capture_output=True, text=True, timeout=180)
            if turn.returncode != 0 or "hi" not in turn.stdout:
                raise SystemExit(f"the turn failed ({turn.returncode}): {turn.stdout} {turn.stderr}")
            time.sleep(SETTLE)
            figures.append(("after one turn", read_tree(app.pid)))
            time.sleep(max(after - SETTLE, 0))
            figures.append((f"{after:.0f} s after the turn", read_tree(app.pid)))
            if app.poll() is not None:
                raise SystemExit(f"the app exited ({app.returncode}) during the measurement")
            return figures
        finally:
            app.send_signal(signal.SIGTERM)
            try:
                app.wait(30)
            except subprocess.TimeoutExpired:
                app.kill()
                app.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--after", type=float, default=120.0, help="seconds after the turn for the last reading")
    parser.add_argument("--display", choices=("auto", "xvfb", "offscreen"), default="auto")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    display = args.display
    if display == "auto":
        display = "offscreen" if missing_tools("trayer") else "xvfb"
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp:
        readings = measure(Path(tmp), args.after, display)
    where = "Xvfb + trayer + dunst" if display == "xvfb" else "offscreen, no tray (chat window open)"
    print(f"process-tree PSS of the running app ({where}), {JOBS} reminder jobs + heartbeat, "
          f"{MCP_COUNT} stdio MCP servers, MB")
    print(f"  {'':28} {'app + helpers':>13} {'app':>7} {'helpers':>8} {'MCP servers':>12}")
    targets = {0: "≤ 120 MB", 2: "≤ 150 MB"}
    figures = Figures()
    for i, (label, tree) in enumerate(readings):
        print(f"  {label:28} {tree.ours:13.1f} {tree.app:7.1f} {tree.helpers:8.1f} {tree.mcp:12.1f}"
              + (f"   target {targets[i]}" if i in targets else ""))
        figures.add(f"Process-tree PSS {label} ({MCP_COUNT} MCP servers apart: {tree.mcp:.0f} MB)",
                    f"{tree.ours:.0f} MB", targets.get(i))
    print(f"  load average {os.getloadavg()[0]:.1f}")
    if args.json:
        print(figures.line())


if __name__ == "__main__":
    main()

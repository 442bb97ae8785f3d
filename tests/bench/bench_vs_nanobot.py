"""Side by side with nanobot (the system we re-imagine), both against the same scripted loopback model.

Install nanobot into its OWN virtualenv (the two must never share one), then point this script at it:

    python3 -m venv /tmp/nbvenv && /tmp/nbvenv/bin/pip install nanobot-ai
    /work/venv/bin/python tests/bench/bench_vs_nanobot.py --nanobot-venv /tmp/nbvenv [--json]
    # or: NANOBOT_VENV=/tmp/nbvenv /work/venv/bin/python tests/bench/bench_vs_nanobot.py

Without a usable nanobot venv it prints why and exits 0 (skipped). Prints, in one run:
1. one-shot CLI, one echo turn each: `nanobot-tray agent -m hi` vs `nanobot agent -m hi` — median wall time,
   CPU time and peak RSS (the child's own rusage via wait4, with our model helper's added), runs interleaved A,B / B,A so a noisy machine hurts
   both alike (CPU time is the steadier figure there); a first run of each, which writes the workspace, is not
   counted;
2. in-process per-turn cost in one growing session: our core (tests/bench/bench_turns.py) vs nanobot's Python SDK
   (`Nanobot.run`, driven by a small script under the nanobot venv's python that reports JSON), echo turns and
   turns with 3 tool calls (list_dir, read_file, and glob — nanobot's equivalent is `find_files`), in interleaved
   blocks; each side runs the scripted server in its own process, as bench_turns.py does, and logs only
   warnings (nanobot's loguru output is disabled, as its CLI does without --logs);
3. a table with both figures and the ratios (ours / nanobot; below 1 means we are faster).
Every answer is checked (the CLI prints "echo", turns end with the scripted answer, tools succeed).
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")

from desktop.core import build_core
from desktop.kernel.bus import ToolFinished, TurnError, TurnFinished
from tests.bench.bench_turns import THREE_TOOLS  # its tool turns: list_dir, read_file, glob
from tests.bench.figures import Figures
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI

FAKESERVER = REPO / "tests" / "fakeserver.py"
NANOBOT_TOOLS = [{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
                 {"tool_calls": [{"name": "read_file", "arguments": {"path": "AGENTS.md"}}]},
                 {"tool_calls": [{"name": "find_files", "arguments": {"glob": "*.md"}}]},
                 {"content": "done"}]

# Runs under the nanobot venv's python (HOME is a temp dir): argv = fakeserver.py, tool-turn script as JSON.
# Reads one JSON command per line ({"kind": "echo"|"tools", "n": N}); answers one "BENCH {...}" line with the
# per-turn milliseconds, after checking every answer.
DRIVER = r'''
import asyncio, importlib.util, json, sys, time
from pathlib import Path

spec = importlib.util.spec_from_file_location("fakeserver", sys.argv[1])
fakeserver = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fakeserver)
TOOLS = json.loads(sys.argv[2])


async def main():
    fake = fakeserver.FakeOpenAI().start()
    config = Path.home() / ".nanobot" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({
        "agents": {"defaults": {"model": "test", "provider": "custom", "timezone": "UTC",
                                "contextWindowTokens": 1000000}},
        "providers": {"custom": {"apiBase": fake.base_url, "apiKey": "sk-bench"}}}))
    from loguru import logger
    from nanobot import Nanobot
    from nanobot.utils.helpers import sync_workspace_templates

    logger.disable("nanobot")  # as its CLI does without --logs; ours logs warnings only
    bot = Nanobot.from_config(config)
    sync_workspace_templates(bot.runtime.workspace, silent=True)  # AGENTS.md etc., as its CLI does
    counter = 0

    async def turn(kind):
        nonlocal counter
        counter += 1
        text = f"message {counter}"
        if kind == "tools":
            fake.add(*TOOLS)
        before = len(fake.requests)
        started = time.perf_counter()
        result = await bot.run(text, session_key="sdk:bench")
        ms = (time.perf_counter() - started) * 1000
        calls = len(fake.requests) - before
        if kind == "echo":
            assert result.content.startswith("echo:") and text in result.content, result.content
            assert calls == 1, calls
        else:
            assert result.content == "done", result.content
            assert result.tools_used == ["list_dir", "read_file", "find_files"], result.tools_used
            bad = [m for m in result.messages if m.get("role") == "tool" and str(m.get("content")).startswith("Error")]
            assert not bad, bad
            assert calls == 4, calls
        return ms

    for _ in range(5):  # warm-up: imports, first connection, workspace files
        await turn("echo")
    print("BENCH " + json.dumps({"ready": True}), flush=True)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        command = json.loads(line)
        cpu = time.process_time()
        times = [await turn(command["kind"]) for _ in range(command["n"])]
        cpu_ms = (time.process_time() - cpu) * 1000
        print("BENCH " + json.dumps({"times": times, "cpu_ms": cpu_ms}), flush=True)
    await bot.aclose()
    fake.stop()


asyncio.run(main())
'''


# ---------------------------------------------------------------- 1. one-shot CLI

def run_child(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user+sys) and peak RSS in MiB of one run, from the child's own rusage (wait4),
    with what it left behind counted in: our CLI's model helper outlives it by a moment (it exits when the CLI's
    end closes its socket), and is reaped here as this process's orphan (we are a child subreaper), its CPU time
    added and its peak RSS added to the CLI's (the two run side by side)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        before = set(_children())
        started = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        cpu, rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
        for orphan in set(_children()) - before:
            _, _, left = os.wait4(orphan, 0)
            cpu, rss = cpu + left.ru_utime + left.ru_stime, rss + left.ru_maxrss
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        if proc.returncode != 0 or "echo" not in stdout:
            raise SystemExit(f"{argv[0]} failed (exit {proc.returncode}):\n{stdout}\n{err.read().decode(errors='replace')}")
        return wall, cpu, rss // 1024


def _children() -> list[int]:
    """This process's children (orphans re-parented to it included)."""
    found: list[int] = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            found += [int(pid) for pid in f.read().split()]
    return found


def become_subreaper() -> None:
    """Orphans of our children come to us (Linux prctl PR_SET_CHILD_SUBREAPER), so run_child can count them."""
    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def cli_side_by_side(venv: Path, runs: int, scratch: Path) -> dict[str, dict[str, list[float]]]:
    server = subprocess.Popen([sys.executable, str(FAKESERVER), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout
        port = int(server.stdout.readline().split("port=")[1])
        base = f"http://127.0.0.1:{port}/v1"
        ours_home = scratch / "cli-ours"
        write_config(ours_home, model="openai/test", api_base=base)
        nb_home = scratch / "cli-nanobot"
        (nb_home / ".nanobot").mkdir(parents=True)
        (nb_home / ".nanobot" / "config.json").write_text(json.dumps({
            "agents": {"defaults": {"model": "test", "provider": "custom", "timezone": "UTC"}},
            "providers": {"custom": {"apiBase": base, "apiKey": "sk-bench"}}}))
        env = {k: v for k, v in os.environ.items() if k not in ("NANOBOT_TRAY_HOME", "VIRTUAL_ENV")}
        ours_bin = str(Path(sys.executable).with_name("nanobot-tray"))
        sides = {"ours": ([ours_bin, "agent", "-m", "hi"], {**env, "NANOBOT_TRAY_HOME": str(ours_home)}),
                 "nanobot": ([str(venv / "bin" / "nanobot"), "agent", "-m", "hi", "--no-markdown"],
                             {**env, "HOME": str(nb_home)})}
        for argv, side_env in sides.values():  # first run writes workspace templates: not counted
            run_child(argv, side_env)
        figures: dict[str, dict[str, list[float]]] = {name: {"wall": [], "cpu": [], "rss": []} for name in sides}
        for i in range(runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                for key, value in zip(("wall", "cpu", "rss"), run_child(*sides[name])):
                    figures[name][key].append(value)
            print(f"  cli run {i + 1}/{runs}: " + ", ".join(
                f"{n} {figures[n]['wall'][-1]:.2f} s wall, {figures[n]['cpu'][-1]:.2f} s cpu, "
                f"{figures[n]['rss'][-1]:.0f} MiB" for n in sides), flush=True)
        return figures
    finally:
        server.terminate()
        server.wait(10)


# ---------------------------------------------------------------- 2. in-process turns

class NanobotDriver:
    """The nanobot SDK in its own venv's python, fed commands over stdin."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, venv: Path, home: Path) -> NanobotDriver:
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"HOME": str(home)}
        proc = await asyncio.create_subprocess_exec(
            str(venv / "bin" / "python"), "-c", DRIVER, str(FAKESERVER), json.dumps(NANOBOT_TOOLS),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
        driver = cls(proc)
        await driver._reply()
        return driver

    async def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout
        while line := (await asyncio.wait_for(self.proc.stdout.readline(), 600)).decode():
            if line.startswith("BENCH "):
                return json.loads(line[6:])
        raise SystemExit(f"nanobot driver ended (exit {await self.proc.wait()}); its stderr is above")

    async def turns(self, kind: str, n: int) -> tuple[list[float], float]:
        """Per-turn wall milliseconds and the process CPU milliseconds of the whole block."""
        assert self.proc.stdin
        self.proc.stdin.write((json.dumps({"kind": kind, "n": n}) + "\n").encode())
        await self.proc.stdin.drain()
        reply = await self._reply()
        return reply["times"], reply["cpu_ms"]

    async def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        await asyncio.wait_for(self.proc.wait(), 60)


async def measure(turns: int, fake: FakeOpenAI, chat: Conversation, tools: bool) -> list[float]:
    """Our turns back to back, each one's wall time (ms), as nanobot's driver times its own."""
    times = []
    for i in range(turns):
        if tools:
            fake.add(*THREE_TOOLS)
        started = time.perf_counter()
        end = await chat.ask(f"message {i}")
        times.append((time.perf_counter() - started) * 1000)
        assert isinstance(end, TurnFinished), end
    return times


async def turns_side_by_side(venv: Path, echo_turns: int, tool_turns: int, rounds: int,
                             scratch: Path) -> dict[str, dict[str, list[float]]]:
    home = scratch / "sdk-ours"
    os.environ["NANOBOT_TRAY_HOME"] = str(home)
    figures: dict[str, dict[str, list[float]]] = {
        n: {"echo": [], "tools": [], "echo_cpu": [], "tools_cpu": []} for n in ("ours", "nanobot")}
    nanobot = await NanobotDriver.start(venv, scratch / "sdk-nanobot")
    with FakeOpenAI() as fake:
        write_config(home, model="openai/test", api_base=fake.base_url, context_window_tokens=1_000_000)
        core = build_core()
        await core.start()
        chat = Conversation(core, chat_id="bench")  # wakes on the turn's end, no polling
        await measure(5, fake, chat, tools=False)  # warm-up: litellm import, first connection
        try:
            for r in range(rounds):
                for kind, total in (("echo", echo_turns), ("tools", tool_turns)):
                    n = total // rounds + (1 if r < total % rounds else 0)
                    order = ["ours", "nanobot"] if r % 2 == 0 else ["nanobot", "ours"]
                    for name in order:
                        if name == "ours":
                            cpu = time.process_time()
                            times = await measure(n, fake, chat, tools=kind == "tools")
                            cpu_ms = (time.process_time() - cpu) * 1000
                        else:
                            times, cpu_ms = await nanobot.turns(kind, n)
                        figures[name][kind] += times
                        figures[name][f"{kind}_cpu"].append(cpu_ms / n)
                print(f"  turn round {r + 1}/{rounds} done", flush=True)
        finally:
            await core.close()
            await nanobot.close()
    errors = [e for e in chat.events if isinstance(e, TurnError)]
    failed_tools = [e for e in chat.events if isinstance(e, ToolFinished) and not e.ok]
    tool_calls = sum(isinstance(e, ToolFinished) for e in chat.events)
    if errors or failed_tools or tool_calls != 3 * tool_turns:
        raise SystemExit(f"our turns misbehaved: {errors[:3]} {failed_tools[:3]} tool calls {tool_calls}")
    echoes = [e for e in chat.events if isinstance(e, TurnFinished) and e.content.startswith("echo: message")]
    if len(echoes) != echo_turns + 5:
        raise SystemExit(f"expected {echo_turns + 5} echo answers, got {len(echoes)}")
    return figures


# ---------------------------------------------------------------- 3. table

def nanobot_version(venv: Path) -> str | None:
    python = venv / "bin" / "python"
    if not (python.exists() and (venv / "bin" / "nanobot").exists()):
        return None
    code = "import importlib.metadata as m, nanobot.nanobot; print(m.version('nanobot-ai'))"
    probe = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120, check=False)
    return probe.stdout.strip() if probe.returncode == 0 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nanobot-venv", type=Path, default=os.environ.get("NANOBOT_VENV"),
                        help="virtualenv with nanobot-ai installed (default: $NANOBOT_VENV)")
    parser.add_argument("--cli-runs", type=int, default=7, help="one-shot CLI runs per side (median)")
    parser.add_argument("--turns", type=int, default=200, help="in-process echo turns per side")
    parser.add_argument("--tool-turns", type=int, default=50, help="in-process 3-tool turns per side")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved blocks the turns are split into")
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    report = Figures()
    venv = args.nanobot_venv
    version = nanobot_version(venv) if venv else None
    if not version:
        where = f"in {venv}" if venv else "(no --nanobot-venv / $NANOBOT_VENV given)"
        print(f"SKIPPED: nanobot-ai is not installed {where}. Install it into a separate venv:\n"
              "  python3 -m venv /tmp/nbvenv && /tmp/nbvenv/bin/pip install nanobot-ai\n"
              "then run with --nanobot-venv /tmp/nbvenv")
        if args.json:
            report.skipped("Side by side with nanobot", f"no nanobot-ai {where}")
            print(report.line())
        return 0
    print(f"nanobot-ai {version} from {venv}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    become_subreaper()
    with tempfile.TemporaryDirectory(prefix="bench-vs-nanobot-") as tmp:
        cli = cli_side_by_side(venv, args.cli_runs, Path(tmp))
        turns = asyncio.run(turns_side_by_side(venv, args.turns, args.tool_turns, args.rounds, Path(tmp)))
    med = statistics.median
    n_cli, n_echo, n_tools = args.cli_runs, args.turns, args.tool_turns
    print(f"\n{'':<50} {'ours':>10} {'nanobot':>10}  {'':<4} {'ratio':>6}")
    rows = [(f"`agent -m hi` wall, median of {n_cli}", "ms", cli, "wall", 1000),
            (f"`agent -m hi` CPU user+sys, median of {n_cli}", "ms", cli, "cpu", 1000),
            (f"`agent -m hi` peak RSS, median of {n_cli}", "MiB", cli, "rss", 1),
            (f"echo turn in-process, median of {n_echo}", "ms", turns, "echo", 1),
            ("echo turn CPU (incl. scripted server), per turn", "ms", turns, "echo_cpu", 1),
            (f"3-tool turn in-process, median of {n_tools}", "ms", turns, "tools", 1),
            ("3-tool turn CPU (incl. scripted server), per turn", "ms", turns, "tools_cpu", 1)]
    for label, unit, figures, key, scale in rows:
        ours, theirs = med(figures["ours"][key]) * scale, med(figures["nanobot"][key]) * scale
        print(f"{label:<50} {ours:>10.1f} {theirs:>10.1f}  {unit:<4} {ours / theirs:>6.2f}")
        report.add(f"vs nanobot {version}: {label}", f"{ours:.1f} {unit} ({ours / theirs:.2f}×)", None,
                    f"{theirs:.1f} {unit}")
    print("ratio = ours / nanobot (below 1: we are faster / smaller). All answers checked.")
    if args.json:
        print(report.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())

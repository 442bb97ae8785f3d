"""Run every benchmark in tests/bench/ one after another and print one table of their figures (figure, target,
ours, and nanobot's where there is a comparison), then write it with the date and the machine to
tests/bench/RESULTS.md.

    python tests/bench/run_all.py [--quick] [--only chat --only turns] [--nanobot-venv /tmp/nbvenv] [--note TEXT]

Each bench_*.py is run as its own process with --json and ends with one JSON line,
{"figures": [{"figure", "target", "ours", "nanobot"}]}; a bench that fails, times out or has no --json yet is a
row saying "not run: why", and one that needs what this machine lacks (a nanobot venv, Xvfb) says "skipped: why".
--quick passes each bench its smaller sizes (fewer runs, shorter idle windows) so the whole run fits in about
15 minutes on a quiet 2-core machine. With --only the table is printed but RESULTS.md is left as it is.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = HERE / "RESULTS.md"

# The smaller sizes --quick asks for, per bench (a bench not named here has no size knob).
QUICK = {"bench_cli_remote": ["--runs", "3"],
         "bench_idle": ["--minutes", "3"],
         "bench_idle_app": ["--seconds", "30"],
         "bench_reminders": ["--seconds", "20"],
         "bench_scheduler": ["--seconds", "20"],
         "bench_startup": ["--runs", "1", "--presses", "5"],
         "bench_turns": ["--turns", "100"],
         "bench_vs_nanobot": ["--cli-runs", "3", "--turns", "60", "--tool-turns", "20", "--rounds", "3"]}
TAKES_NANOBOT = ("bench_cli_remote", "bench_vs_nanobot")  # given --nanobot-venv when there is one


def benches(only: list[str]) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if not only:
        return found
    wanted = {name.removeprefix("bench_").removesuffix(".py") for name in only}
    chosen = [p for p in found if p.stem.removeprefix("bench_") in wanted]
    unknown = wanted - {p.stem.removeprefix("bench_") for p in chosen}
    if unknown:
        raise SystemExit(f"no such bench: {', '.join(sorted(unknown))} (have: "
                         f"{', '.join(p.stem.removeprefix('bench_') for p in found)})")
    return chosen


def not_run(bench: str, why: str) -> list[dict[str, str | None]]:
    return [{"figure": bench, "target": None, "ours": f"not run: {why}", "nanobot": None}]


def last_words(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "no output"


def run_one(path: Path, args: argparse.Namespace, log: Path) -> tuple[list[dict[str, str | None]], float]:
    argv = [sys.executable, str(path), "--json", *(QUICK.get(path.stem, []) if args.quick else [])]
    if path.stem in TAKES_NANOBOT and args.nanobot_venv:
        argv += ["--nanobot-venv", str(args.nanobot_venv)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    try:
        done = subprocess.run(argv, cwd=str(REPO), env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        log.write_text(out, encoding="utf-8")
        return not_run(path.stem, f"timed out after {args.timeout:.0f} s"), time.monotonic() - started
    seconds = time.monotonic() - started
    log.write_text(f"$ {' '.join(argv)}\n{done.stdout}\n--- stderr\n{done.stderr}", encoding="utf-8")
    lines = done.stdout.strip().splitlines()
    try:
        figures = json.loads(lines[-1])["figures"] if lines else None
    except (json.JSONDecodeError, KeyError, TypeError):
        figures = None
    if isinstance(figures, list) and figures and done.returncode == 0:
        return figures, seconds
    if "unrecognized arguments: --json" in done.stderr:
        return not_run(path.stem, "it has no --json mode yet"), seconds
    if done.returncode != 0:
        return not_run(path.stem, f"exit {done.returncode}: {last_words(done.stderr or done.stdout)}"), seconds
    return not_run(path.stem, "it printed no JSON figures line"), seconds


def cell(value: str | None) -> str:
    return "—" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def table(rows: list[tuple[str, dict[str, str | None]]]) -> str:
    lines = ["| Bench | Figure | Target | Ours | nanobot |", "|---|---|---|---|---|"]
    for bench, fig in rows:
        lines.append(f"| {bench.removeprefix('bench_')} | {cell(fig.get('figure'))} | {cell(fig.get('target'))} | "
                     f"{cell(fig.get('ours'))} | {cell(fig.get('nanobot'))} |")
    return "\n".join(lines)


def machine() -> list[str]:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 platform.processor() or "unknown")
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    total = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal")), 0)
    release = Path("/etc/os-release")
    distro = next((line.split("=", 1)[1].strip('"') for line in release.read_text().splitlines()
                   if line.startswith("PRETTY_NAME=")), "") if release.exists() else ""
    return [f"- CPU: {model}, {os.cpu_count()} cores",
            f"- RAM: {total / 1024 / 1024:.1f} GiB",
            f"- Python: {platform.python_version()} ({sys.executable})",
            f"- OS: {distro + ', ' if distro else ''}{platform.system()} {platform.release()}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this bench (chat or bench_chat); repeat for more")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, so the whole run fits ~15 minutes")
    parser.add_argument("--nanobot-venv", type=Path, default=os.environ.get("NANOBOT_VENV"),
                        help="virtualenv with nanobot-ai, for the side-by-side figures (default: $NANOBOT_VENV)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds one bench may take")
    parser.add_argument("--note", default="", help="a line for RESULTS.md (say if the machine was busy)")
    parser.add_argument("--logs", type=Path, default=Path("/tmp/nanobot-tray-bench-logs"),
                        help="where each bench's full output goes")
    args = parser.parse_args()
    chosen = benches(args.only)
    args.logs.mkdir(parents=True, exist_ok=True)
    began, load_before = datetime.now(UTC), os.getloadavg()
    rows: list[tuple[str, dict[str, str | None]]] = []
    for path in chosen:
        print(f"{path.stem} ...", end=" ", flush=True)
        figures, seconds = run_one(path, args, args.logs / f"{path.stem}.log")
        print(f"{seconds:.0f} s", flush=True)
        rows += [(path.stem, fig) for fig in figures]
    load_after = os.getloadavg()
    minutes = (datetime.now(UTC) - began).total_seconds() / 60
    text = table(rows)
    print()
    print(text)
    print(f"\n{len(chosen)} benches in {minutes:.1f} min; full outputs in {args.logs}")
    if args.only:
        return 0
    mode = "--quick" if args.quick else "full sizes"
    lines = ["# Benchmark results", "",
             f"Run by `tests/bench/run_all.py` ({mode}) on {began:%Y-%m-%d %H:%M} UTC, {minutes:.0f} min.", "",
             *machine(),
             f"- Load average (1 min) at start {load_before[0]:.1f}, at the end {load_after[0]:.1f}", ""]
    if args.note:
        lines += [args.note, ""]
    lines += [text, "",
              "Targets come from the issues; \"not run\" and \"skipped\" rows say why. Each bench's own output "
              "has more detail: run it alone (`python tests/bench/bench_NAME.py`).", ""]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

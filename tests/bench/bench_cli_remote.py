"""`nanobot-tray agent -m hi` as a thin client of the running app vs in-process (`--standalone`), and, given a
nanobot venv, nanobot's own CLI — all against one scripted loopback model.

    /work/main/.venv/bin/python tests/bench/bench_cli_remote.py [--runs 5] [--nanobot-venv /tmp/nbvenv] [--json]

Starts the real tray app offscreen (QT_QPA_PLATFORM=offscreen) in a scratch home with a private runtime
directory, waits for its first forwarded answer (not counted), then runs the commands interleaved and
reports the median wall time and the client's peak RSS (its own rusage via wait4, with the model helper an
in-process run starts added). Every answer is checked.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.bench.bench_vs_nanobot import FAKESERVER, become_subreaper, run_child  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.conftest import write_config  # noqa: E402


def measure(runs: int, nanobot_venv: Path | None, scratch: Path) -> dict[str, dict[str, float]]:
    become_subreaper()  # an in-process run's model helper is counted with it (run_child)
    server = subprocess.Popen([sys.executable, str(FAKESERVER), "--port", "0"], stdout=subprocess.PIPE, text=True)
    app: subprocess.Popen[bytes] | None = None
    try:
        assert server.stdout
        base = f"http://127.0.0.1:{int(server.stdout.readline().split('port=')[1])}/v1"
        home = scratch / "home"
        write_config(home, model="openai/test", api_base=base)
        runtime = scratch / "run"
        runtime.mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "DISPLAY", "WAYLAND_DISPLAY")}
        env.update(NANOBOT_TRAY_HOME=str(home), XDG_RUNTIME_DIR=str(runtime), QT_QPA_PLATFORM="offscreen",
                   PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring", PYTHONPATH=str(REPO))
        ours = str(Path(sys.executable).with_name("nanobot-tray"))
        sides: dict[str, tuple[list[str], dict[str, str]]] = {
            "app running": ([ours, "agent", "-m", "hi"], env),
            "in-process": ([ours, "agent", "-m", "hi", "--standalone"], env)}
        if nanobot_venv is not None:
            nb_home = scratch / "nanobot"
            (nb_home / ".nanobot").mkdir(parents=True)
            (nb_home / ".nanobot" / "config.json").write_text(json.dumps({
                "agents": {"defaults": {"model": "test", "provider": "custom", "timezone": "UTC"}},
                "providers": {"custom": {"apiBase": base, "apiKey": "sk-bench"}}}))
            sides["nanobot"] = ([str(nanobot_venv / "bin" / "nanobot"), "agent", "-m", "hi", "--no-markdown"],
                                {**env, "HOME": str(nb_home)})
        for argv, side_env in sides.values():  # first runs write workspaces: not counted
            if argv[0] != ours or "--standalone" in argv:
                run_child(argv, side_env)
        app = subprocess.Popen([ours], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not any(p.name.startswith("nanobot-tray-") for p in runtime.iterdir()):
            if time.monotonic() > deadline or app.poll() is not None:
                raise SystemExit("the app did not start")
            time.sleep(0.2)
        run_child(*sides["app running"])  # waits for the app's model library: not counted
        figures = {name: {"wall": [], "rss": []} for name in sides}  # type: dict[str, dict[str, list[float]]]
        for i in range(runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))
            for name in order:
                wall, _cpu, rss = run_child(*sides[name])
                figures[name]["wall"].append(wall)
                figures[name]["rss"].append(rss)
        return {name: {k: statistics.median(v) for k, v in f.items()} for name, f in figures.items()}
    finally:
        if app is not None:
            app.send_signal(signal.SIGTERM)
            app.wait(30)
        server.terminate()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--nanobot-venv", type=Path, default=os.environ.get("NANOBOT_VENV"))
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    venv = args.nanobot_venv if args.nanobot_venv and (Path(args.nanobot_venv) / "bin" / "nanobot").exists() else None
    with tempfile.TemporaryDirectory() as scratch:
        result = measure(args.runs, venv, Path(scratch))
    print(f"`agent -m hi`, median of {args.runs} ({os.cpu_count()} CPUs)")
    print(f"{'':14} {'wall s':>8} {'peak RSS MiB':>13}")
    for name, fig in result.items():
        print(f"{name:14} {fig['wall']:8.3f} {fig['rss']:13.0f}")
    nanobot = result.get("nanobot")
    if nanobot:
        ratio = result["app running"]["wall"] / nanobot["wall"]
        print(f"app running / nanobot wall: {ratio:.3f} (target <= 0.1)")
    else:
        print("nanobot: no venv given (--nanobot-venv); see bench_vs_nanobot.py for how to make one")
    if args.json:
        figures = Figures()
        for name in ("app running", "in-process"):
            wall, rss = result[name]["wall"], result[name]["rss"]
            ratio_text = f" ({wall / nanobot['wall']:.2f}×)" if nanobot else ""
            figures.add(f"CLI `agent -m hi`, {name}: wall, median of {args.runs}", f"{wall:.3f} s{ratio_text}",
                        "≤ 0.1× nanobot" if name == "app running" else None,
                        f"{nanobot['wall']:.3f} s" if nanobot else None)
            figures.add(f"CLI `agent -m hi`, {name}: client peak RSS", f"{rss:.0f} MiB",
                        "≤ 60 MiB" if name == "app running" else None, f"{nanobot['rss']:.0f} MiB" if nanobot else None)
        print(figures.line())


if __name__ == "__main__":
    main()

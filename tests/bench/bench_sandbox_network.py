"""What the sandbox's `internet` mode costs against `host` (today's shared network): a `curl` of a small page
and a `pip download` of one small package from a local https index, each a whole `exec` call through the
real sandbox (bwrap, its own network namespace, socat and the app's egress proxy in internet mode).

Run: python tests/bench/bench_sandbox_network.py [--runs N] [--json]     (as root: it builds a private
internet in network namespaces, tests/netlab.py; elsewhere every figure says skipped and why)

Figures: the median wall time of the exec call per mode, and for curl also its own time_total (the
connection through the proxy, without the call's set-up); the call overhead of an empty command per mode;
a curl of a site whose IPv6 address never answers (the proxy tries IPv4 a quarter second later, as curl
itself does in host mode).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.config import Config  # noqa: E402
from desktop.kernel.paths import home  # noqa: E402
from desktop.tools.base import ToolContext  # noqa: E402
from desktop.tools.sandbox import exec_sandbox  # noqa: E402
from desktop.tools.shell import ExecTool  # noqa: E402
from desktop.workspace.layout import ensure_workspace  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.netlab import PACKAGE, PUBLIC, PUBLIC_TOKEN, Unavailable, private_internet  # noqa: E402

CTX = ToolContext("cli:bench")
MODES = ("internet", "host", "off")


def tool(workspace: Path, network: str) -> ExecTool:
    config = Config()
    config.tools.exec.network = network
    return ExecTool(workspace, 120, restrict=True, sandbox=exec_sandbox(config, home(), workspace))


async def timed(exec_tool: ExecTool, command: str, runs: int, expect: str) -> tuple[list[float], list[str]]:
    seconds, outputs = [], []
    for _ in range(runs):
        start = time.perf_counter()
        output = str(await exec_tool.execute(CTX, command))
        seconds.append(time.perf_counter() - start)
        if expect not in output:
            raise SystemExit(f"the command did not do its job ({command}):\n{output}")
        outputs.append(output)
    return seconds, outputs


async def measure(root: Path, runs: int, figures: Figures) -> None:
    workspace = root / "workspace"
    ensure_workspace(workspace)
    (root / "net").mkdir()
    with private_internet(root / "net") as internet:
        host = "public.test" if internet.dns_ok else PUBLIC
        (workspace / "ca.pem").write_bytes(internet.ca_file.read_bytes())
        curl = f"curl -sS -m 20 -w ' time_total=%{{time_total}}' http://{host}/page.html"
        pip = (f"for py in {sys.executable} python3; do $py -m pip --version >/dev/null 2>&1 && break; done; "
               f"rm -rf dl; $py -m pip download --no-cache-dir --disable-pip-version-check -q -d dl --cert ca.pem "
               f"--index-url https://{host}/simple {PACKAGE} && ls dl")
        for mode in MODES:
            exec_tool = tool(workspace, mode)
            print(f"{mode}: {(await exec_tool.mode()).network.description}")
            empty, _ = await timed(exec_tool, "true", runs, "Exit code: 0")
            figures.add(f"exec call of an empty command, network {mode}, median of {runs}",
                        f"{statistics.median(empty) * 1000:.0f} ms")
            if mode == "off":
                continue
            page, outputs = await timed(exec_tool, curl, runs, PUBLIC_TOKEN)
            inside = [float(o.split("time_total=")[1].split()[0]) for o in outputs]
            figures.add(f"curl of a local test page, network {mode}: exec call, median of {runs}",
                        f"{statistics.median(page) * 1000:.0f} ms")
            figures.add(f"curl of a local test page, network {mode}: curl's own time_total, median of {runs}",
                        f"{statistics.median(inside) * 1000:.1f} ms")
            if internet.dns_ok:
                dual, _ = await timed(exec_tool, "curl -sS -m 30 http://dual.test/page.html", runs, PUBLIC_TOKEN)
                figures.add(f"curl of a site whose IPv6 address never answers, network {mode}: exec call, "
                            f"median of {runs}", f"{statistics.median(dual) * 1000:.0f} ms")
            download, _ = await timed(exec_tool, pip, runs, "nbt_tiny-1.0-py3-none-any.whl")
            figures.add(f"pip download of one small package over https, network {mode}: exec call, median of {runs}",
                        f"{statistics.median(download) * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    figures = Figures()
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        os.environ["NANOBOT_TRAY_HOME"] = str(Path(tmp) / "app")
        try:
            asyncio.run(measure(Path(tmp), args.runs, figures))
        except Unavailable as exc:
            figures.skipped("sandbox network: internet vs host", str(exc))
    for row in figures.rows:
        print(f"{row['figure']}: {row['ours']}")
    if args.json:
        print(figures.line())


if __name__ == "__main__":
    main()

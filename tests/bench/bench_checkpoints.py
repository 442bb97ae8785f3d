"""Checkpoints benchmark: what recording a turn's file changes costs in a 10,000-file workspace.

Run: python tests/bench/bench_checkpoints.py [--json] [--files N] [--runs N]
     BENCH_CHECKPOINTS_GB=1 python tests/bench/bench_checkpoints.py   # also a 1 GB workspace (writes ~2 GB)
Target (issue 25): < 50 ms per turn when the turn changes one file. A turn costs two looks at the workspace
(at its start, while the model composes its first answer, and after its end); the figures are one look each,
wall and CPU time, then both looks of real turns together, plus the first look ever (which copies the workspace
into the store once), the look right after it (every file written within the second before a look is read again,
since a rewrite in the same clock tick would not show in its stat), saving the manifest (once the looks go quiet,
off any turn's way), undo, and the time the first tool of a real turn waited for the look at its start (the only
part a person could notice).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.checkpoints import Checkpoints  # noqa: E402
from desktop.checkpoints.scan import RACY_NS  # noqa: E402
from desktop.core import Core, build_core  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

FIGURES = Figures()
GB_ENV = "BENCH_CHECKPOINTS_GB"


def fill(workspace: Path, files: int, size: int) -> None:
    """`files` files of `size` bytes in folders of 100, two levels deep."""
    block = os.urandom(size)
    for i in range(files):
        folder = workspace / "project" / f"part{i // 1000}" / f"dir{i // 100 % 10}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i}.txt").write_bytes(block[: size - 8] + i.to_bytes(8, "little"))


async def timed(work: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) for one run of `work`."""
    wall, cpu = time.perf_counter(), time.process_time()
    await work()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


async def look(checkpoints: Checkpoints) -> None:
    checkpoints.request_look()
    while (worker := checkpoints._worker) is not None:  # not `settled()`: a tool does not wait for the first copy
        await asyncio.shield(worker)


def summary(samples: list[tuple[float, float]]) -> str:
    walls, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return f"median {statistics.median(walls):7.1f} ms wall, {statistics.median(cpus):7.1f} ms CPU (min {min(walls):.1f} ms)"


async def measure(label: str, files: int, size: int, runs: int, fake: FakeOpenAI) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NANOBOT_TRAY_HOME"] = tmp
        Path(tmp, "config.yaml").write_text(f"model: openai/test\napi_base: {fake.base_url}\n", encoding="utf-8")
        core = build_core()
        fill(core.workspace, files, size)
        checkpoints = core.get(Checkpoints)
        first = await timed(lambda: look(checkpoints))
        recent = await timed(lambda: look(checkpoints))
        await asyncio.sleep(RACY_NS / 1e9)  # the workspace was all written just now: let that settle
        print(f"{label}: {files:,} files of {size:,} bytes")
        print(f"  first look ever (copies the workspace into the store): {first[0]:8.1f} ms wall, {first[1]:.1f} ms CPU")
        print(f"  the look right after it (files written within a second of it hashed again): {recent[0]:.1f} ms wall")
        unchanged = [await timed(lambda: look(checkpoints)) for _ in range(runs)]
        one = []
        target = core.workspace / "project/part0/dir0/file0.txt"
        for _ in range(runs):
            target.write_bytes(os.urandom(size))
            one.append(await timed(lambda: look(checkpoints)))
        print(f"  look, nothing changed:  {summary(unchanged)}")
        print(f"  look, one file changed: {summary(one)}")
        save = await timed(lambda: asyncio.to_thread(checkpoints.manifests.save, core.workspace,
                                                     checkpoints._manifest, checkpoints._looked_ns))
        print(f"  saving the manifest (once the looks go quiet): {save[0]:.1f} ms wall")
        waits, costs = await real_turns(core, fake, runs)
        print(f"  a real turn's first tool waited for the look at its start: median {statistics.median(waits):.1f} ms, "
              f"max {max(waits):.1f} ms")
        print(f"  a real turn's two looks together (and writing down what it changed): median "
              f"{statistics.median(c[0] for c in costs):.1f} ms wall, of which their walks' own CPU "
              f"{statistics.median(c[1] for c in costs):.1f} ms (the rest: the turn's other work holding the "
              "interpreter lock meanwhile)")
        undo = await timed(lambda: checkpoints.undo("cli:bench"))
        print(f"  undo of a turn that wrote one file: {undo[0]:.1f} ms wall")
        FIGURES.add(f"Checkpoints, {label}: one look with one file changed, median",
                    f"{statistics.median(s[0] for s in one):.1f} ms", "< 50 ms per turn")
        FIGURES.add(f"Checkpoints, {label}: both looks of a real turn that wrote one file, median",
                    f"{statistics.median(c[0] for c in costs):.1f} ms wall, "
                    f"{statistics.median(c[1] for c in costs):.1f} ms CPU", "< 50 ms per turn")
        FIGURES.add(f"Checkpoints, {label}: first tool's wait for the look at its turn's start, median",
                    f"{statistics.median(waits):.1f} ms")
        FIGURES.add(f"Checkpoints, {label}: first look ever (copies the workspace)", f"{first[0] / 1000:.2f} s")
        FIGURES.add(f"Checkpoints, {label}: undo of a one-file turn", f"{undo[0]:.1f} ms")
        await core.close()


async def real_turns(core: Core, fake: FakeOpenAI, runs: int) -> tuple[list[float], list[tuple[float, float]]]:
    """Turns that write one file: how long each write_file call waited in the tool gate for the look, and each
    turn's looks together: wall time, and the CPU time of their walks (in their worker thread)."""
    checkpoints = core.get(Checkpoints)
    settled, one_look, walk = checkpoints.settled, checkpoints._look, checkpoints._scan
    waits: list[float] = []
    looking = [0.0, 0.0]

    def timed_walk(*args: Any) -> Any:
        start = time.thread_time()
        try:
            return walk(*args)
        finally:
            looking[1] += (time.thread_time() - start) * 1000

    async def timed_look() -> None:
        start = time.perf_counter()
        await one_look()
        looking[0] += (time.perf_counter() - start) * 1000

    async def measured() -> None:
        start = time.perf_counter()
        await settled()
        waits.append((time.perf_counter() - start) * 1000)

    checkpoints.settled = measured  # type: ignore[method-assign]  # the gate calls it before every tool
    checkpoints._look = timed_look  # type: ignore[method-assign]
    checkpoints._scan = timed_walk  # type: ignore[method-assign]
    await core.start()
    await settled()
    costs: list[tuple[float, float]] = []
    for n in range(runs):
        looking[0] = looking[1] = 0.0
        fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "out.txt", "content": f"run {n}"}}]},
                 {"content": "Done."})
        await asyncio.wait_for(core.loop.ask("cli:bench", "write it"), 120)
        await settled()
        costs.append((looking[0], looking[1]))
    checkpoints.settled = settled  # type: ignore[method-assign]
    checkpoints._look = one_look  # type: ignore[method-assign]
    checkpoints._scan = walk  # type: ignore[method-assign]
    return waits, costs


async def main_async(args: argparse.Namespace) -> None:
    with FakeOpenAI() as fake:
        await measure("10,000 files", args.files, 4096, args.runs, fake)
        if os.environ.get(GB_ENV):
            await measure("1 GB", args.files, 2**30 // args.files, args.runs, fake)
        else:
            FIGURES.skipped("Checkpoints, 1 GB workspace", f"set {GB_ENV}=1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main_async(args))
    if args.json:
        print(FIGURES.line())


if __name__ == "__main__":
    main()

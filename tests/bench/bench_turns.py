"""Per-turn overhead of the agent core against the scripted loopback model (answers instantly).

    python tests/bench/bench_turns.py [--turns 200] [--json]

Prints the median and p90 of echo turns and of turns with 3 tool calls, in one process and one growing
session, and beside each the floor: the same requests (as the scripted server received them) made bare with
litellm in this process right after the turn, streamed and read to the end, with nothing of ours around them
(issue 26: a turn should cost at most 1.5 times that). The server runs in a process of its own
(tests/bench/fake_process.py), as a real one would. Model calls go through the model helper process (a socket read on a worker
thread), so profile with a sampling profiler that sees every thread and process:
    py-spy record --subprocesses -o profile.svg -- python tests/bench/bench_turns.py"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")

from desktop.core import build_core  # noqa: E402
from desktop.kernel.bus import TurnError, TurnFinished  # noqa: E402
from tests.bench.fake_process import FakeProcess  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.conftest import Conversation, write_config  # noqa: E402

THREE_TOOLS: list[dict[str, Any]] = [{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
               {"tool_calls": [{"name": "read_file", "arguments": {"path": "AGENTS.md"}}]},
               {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.md"}}]},
               {"content": "done"}]
DONE = THREE_TOOLS[-1]
SETTLE = 0.005  # seconds before each turn and each floor: what the last one left running in the background ends


async def paired(turns: int, fake: FakeProcess, chat: Conversation, tools: bool) -> tuple[list[float], list[float]]:
    """Each turn's wall time (ms), and beside it the floor: the requests that turn made, made again bare right
    after it. Interleaved, so a machine that slows down or speeds up during the run weighs on both alike; each
    starts once the previous one's background work (memory, checkpoints, the usage log) has settled."""
    ours, bare = [], []
    for i in range(turns):
        if tools:
            fake.add(*THREE_TOOLS)
        await asyncio.sleep(SETTLE)
        started = time.perf_counter()
        end = await chat.ask(f"message {i}")
        ours.append((time.perf_counter() - started) * 1000)
        assert isinstance(end, TurnFinished), end
        asked = fake.new_requests()
        fake.add(*[THREE_TOOLS[0]] * (len(asked) - 1), DONE)  # the floor's answers, scripted before its clock starts
        await asyncio.sleep(SETTLE)
        bare.append(await floor(fake.base_url, asked))
        fake.new_requests()
    return ours, bare


async def floor(base_url: str, requests: list[dict[str, Any]]) -> float:
    """A turn's requests made bare with litellm, one after another as the turn made them (ms)."""
    from desktop.providers.litellm_env import litellm

    lm = litellm()
    started = time.perf_counter()
    for body in requests:
        extra = {"tools": body["tools"]} if body.get("tools") else {}
        stream = await lm.acompletion(model="openai/test", api_base=base_url, api_key="no-key-needed",
                                      messages=body["messages"], stream=True, max_tokens=body.get("max_tokens"),
                                      stream_options={"include_usage": True}, **extra)
        async for _chunk in stream:
            pass
    return (time.perf_counter() - started) * 1000


def report(name: str, times: list[float]) -> tuple[float, float]:
    times_sorted = sorted(times)
    p90 = times_sorted[int(len(times_sorted) * 0.9)]
    print(f"{name:<28} median {statistics.median(times):6.1f} ms   p90 {p90:6.1f} ms   (n={len(times)})")
    return statistics.median(times), p90


async def main(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    os.environ["NANOBOT_TRAY_HOME"] = str(home)
    with FakeProcess() as fake:
        write_config(home, model="openai/test", api_base=fake.base_url, context_window_tokens=1_000_000)
        core = build_core()
        await core.start()
        chat = Conversation(core, chat_id="bench")
        await paired(5, fake, chat, tools=False)  # warm-up: litellm's import in the helper and here, connections
        echo, echo_floor = await paired(args.turns, fake, chat, tools=False)
        three, three_floor = await paired(max(args.turns // 4, 20), fake, chat, tools=True)
        await core.close()
        floors = {"echo turn": echo_floor, "turn with 3 tool calls": three_floor}
        errors = [e for e in chat.events if isinstance(e, TurnError)]
        print(f"session grew to {len(core.sessions._cache[chat.key].messages)} messages; errors: {len(errors)}")
        figures = Figures()
        for name, times, target in (("echo turn", echo, "≤ 25 ms"), ("turn with 3 tool calls", three, "≤ 75 ms")):
            median, p90 = report(name, times)
            bare, _ = report("  floor: bare litellm", floors[name])
            figures.add(f"Agent core: {name}, median of {len(times)}", f"{median:.1f} ms (p90 {p90:.1f})",
                        f"{target} median")
            figures.add(f"Agent core: {name} against the bare-litellm floor ({bare:.1f} ms)",
                        f"{median / bare:.2f}×", "≤ 1.5×")
        if args.json:
            print(figures.line())


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    asyncio.run(main(parser.parse_args()))

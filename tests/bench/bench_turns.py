"""Per-turn overhead of the agent core against the scripted loopback model (answers instantly).

    python tests/bench/bench_turns.py [--turns 200] [--json]

Prints the median and p90 of echo turns and of turns with 3 tool calls, in one process and one growing
session, and beside each the floor: the same requests (as the scripted server received them) made bare with
litellm in this process, streamed and read to the end, with nothing of ours around them (issue 26: a turn
should cost at most 1.5 times that). Model calls go through the model helper process (a socket read on a worker
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
from tests.bench.figures import Figures  # noqa: E402
from tests.conftest import Conversation, write_config  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402

THREE_TOOLS: list[dict[str, Any]] = [{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
               {"tool_calls": [{"name": "read_file", "arguments": {"path": "AGENTS.md"}}]},
               {"tool_calls": [{"name": "glob", "arguments": {"pattern": "*.md"}}]},
               {"content": "done"}]
DONE = THREE_TOOLS[-1]


async def measure(turns: int, fake: FakeOpenAI, chat: Conversation, tools: bool,
                  asked: list[list[dict[str, Any]]] | None = None) -> list[float]:
    """Each turn's wall time (ms); `asked` gets each turn's requests as the server received them."""
    times = []
    for i in range(turns):
        if tools:
            fake.add(*THREE_TOOLS)
        before = len(fake.requests)
        started = time.perf_counter()
        end = await chat.ask(f"message {i}")
        times.append((time.perf_counter() - started) * 1000)
        assert isinstance(end, TurnFinished), end
        if asked is not None:
            asked.append(fake.requests[before:])
    return times


async def floor(fake: FakeOpenAI, turns: list[list[dict[str, Any]]]) -> list[float]:
    """Each turn's requests made bare with litellm, one after another as the turn made them (ms per turn)."""
    from desktop.providers.litellm_env import litellm

    lm = litellm()
    times = []
    for requests in turns:
        started = time.perf_counter()
        for body in requests:
            extra = {"tools": body["tools"]} if body.get("tools") else {}
            fake.add(THREE_TOOLS[0] if body is not requests[-1] else DONE)
            stream = await lm.acompletion(model="openai/test", api_base=fake.base_url, api_key="no-key-needed",
                                          messages=body["messages"], stream=True, max_tokens=body.get("max_tokens"),
                                          stream_options={"include_usage": True}, **extra)
            async for _chunk in stream:
                pass
        times.append((time.perf_counter() - started) * 1000)
    return times


def report(name: str, times: list[float]) -> tuple[float, float]:
    times_sorted = sorted(times)
    p90 = times_sorted[int(len(times_sorted) * 0.9)]
    print(f"{name:<28} median {statistics.median(times):6.1f} ms   p90 {p90:6.1f} ms   (n={len(times)})")
    return statistics.median(times), p90


async def main(args: argparse.Namespace) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-turns-"))
    os.environ["NANOBOT_TRAY_HOME"] = str(home)
    with FakeOpenAI() as fake:
        write_config(home, model="openai/test", api_base=fake.base_url, context_window_tokens=1_000_000)
        core = build_core()
        await core.start()
        chat = Conversation(core, chat_id="bench")
        await measure(5, fake, chat, tools=False)  # warm-up: the helper's litellm import, first connection
        echo_asked: list[list[dict[str, Any]]] = []
        three_asked: list[list[dict[str, Any]]] = []
        echo = await measure(args.turns, fake, chat, tools=False, asked=echo_asked)
        three = await measure(max(args.turns // 4, 20), fake, chat, tools=True, asked=three_asked)
        await core.close()
        await floor(fake, echo_asked[:5])  # warm-up: litellm's import here, first connection
        floors = {"echo turn": await floor(fake, echo_asked), "turn with 3 tool calls": await floor(fake, three_asked)}
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

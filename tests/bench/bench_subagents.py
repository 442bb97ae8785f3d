"""Background tasks while the user reads a long answer: 5 subagents, each making 3 tool calls (exec `echo`,
read_file, exec `echo`), while a 2,000-token answer streams into the shown chat window. The real core runs on
the qasync loop, offscreen, against the scripted loopback model (tests/fakeserver.py, in a process of its own as
a real server is), paced at about 200 tokens/s as a fast local model would stream.

Run: python tests/bench/bench_subagents.py [--json]
Target (issue 26): worst GUI stall (gap between ticks of a 5 ms timer, minus the interval) <= 16 ms.
The chat spawns the 5 tasks, then the next question streams its answer while they work; the tasks panel, the
tray count and the results told in the same chat all happen during the measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import qasync  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop.subagents import Subagents  # noqa: E402
from desktop.ui.collector import GuiThreadCollector  # noqa: E402
from tests.bench.bench_chat import StallMeter, answer, ms  # noqa: E402
from tests.bench.fake_process import FakeProcess  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.conftest import write_config  # noqa: E402
from tests.fakeserver import Step, last_user_text  # noqa: E402

TASKS = 5
TOKENS = 2000
CHARS_PER_TOKEN = 4  # one streamed piece is one token
RATE = 200  # tokens per second
PROBE_MS = 5
QUESTION = "Explain the whole build to me, step by step."
SUBAGENT_PROMPT = "# Background task"  # how our subagent prompt starts: tells the scripted model who is asking
TOOL_STEPS = [{"name": "exec", "arguments": {"command": "echo first step"}},
              {"name": "read_file", "arguments": {"path": "AGENTS.md"}},
              {"name": "exec", "arguments": {"command": "echo last step"}}]


class CpuStallMeter(StallMeter):
    """Also the GUI thread's own CPU time between ticks: on a busy machine a long gap can be mere waiting for a
    core, while this part is work the GUI thread did (or was handed) instead of reacting."""

    def __init__(self, interval_ms: int) -> None:
        super().__init__(interval_ms)
        self.cpu: list[float] = []
        self.at: list[float] = []  # when each gap ended
        self._last_cpu = 0.0

    def start(self) -> None:
        self.cpu.clear()
        self.at.clear()
        self._last_cpu = time.thread_time()
        super().start()

    def worst_at(self) -> float:
        return self.at[max(range(len(self.gaps)), key=self.gaps.__getitem__)]

    def _tick(self) -> None:
        now = time.thread_time()
        self.cpu.append(now - self._last_cpu)
        self._last_cpu = now
        super()._tick()
        self.at.append(self._last)


class Watchdog(threading.Thread):
    """With --why: when the GUI thread has not ticked for `limit`, remember where it is (its Python stack), so a
    stall can be traced to the code that caused it. Off for the figures: looking costs a little."""

    def __init__(self, meter: StallMeter, limit: float = 0.016) -> None:
        super().__init__(daemon=True)
        self.meter, self.limit = meter, limit
        self.gui = threading.get_ident()
        self.seen: dict[str, int] = {}
        self.running = True

    def run(self) -> None:
        while self.running:
            time.sleep(0.004)
            if self.meter.timer.isActive() and time.perf_counter() - self.meter._last > self.limit:
                frame = sys._current_frames().get(self.gui)
                if frame is not None:
                    stack = "".join(traceback.format_stack(frame)[-12:])
                    self.seen[stack] = self.seen.get(stack, 0) + 1


def long_answer() -> str:
    text = answer(random.Random(11), 60)
    while len(text) < TOKENS * CHARS_PER_TOKEN:
        text += "\n\n" + answer(random.Random(len(text)), 20)
    return text[:TOKENS * CHARS_PER_TOKEN]


def model() -> Any:
    """The chat spawns TASKS tasks, then streams the long answer for QUESTION, one piece every 1/RATE s (a real
    model does not answer in one burst); each task calls its 3 tools, one per model call, then reports; a task's
    result is told in a sentence. Called in the scripted server's own process (tests/bench/fake_process.py)."""
    streamed = long_answer()

    def reply(body: dict[str, Any]) -> Step:
        messages = body["messages"]
        if str(messages[0]["content"]).startswith(SUBAGENT_PROMPT):
            done = sum(1 for m in messages if m.get("role") == "tool")
            if done < len(TOOL_STEPS):
                return {"tool_calls": [TOOL_STEPS[done]], "delay": 0.3}
            return {"content": "Report: all three steps ran.", "delay": 0.3}
        text = last_user_text(body)
        if "[Background task" in text:
            return {"content": "One of the background tasks finished: all three steps ran."}
        if text == QUESTION:
            return {"content": streamed, "chunk": CHARS_PER_TOKEN, "pace": 1 / RATE}
        if messages[-1].get("role") == "tool":
            return {"content": f"I started {TASKS} background tasks."}
        if text.startswith("start"):
            return {"tool_calls": [{"name": "spawn", "arguments": {"task": f"run check number {i}",
                                                                 "label": f"Check {i}"}}
                                   for i in range(1, TASKS + 1)]}
        return {"content": f"echo: {text}"}
    return reply


async def until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def run(figures: Figures, why: bool) -> None:
    from desktop.core import build_core
    from desktop.kernel.bus import TextDelta, ToolFinished, TurnFinished
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.chat.window import ChatWindow

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    streamed = long_answer()
    core = await asyncio.to_thread(build_core)
    await core.start()
    bridge = CoreBridge(core)
    ends: list[str] = []  # the chats whose turns finished
    tools: list[ToolFinished] = []
    shown: list[str] = []  # text streamed into the chat

    def seen(event: object) -> None:
        if isinstance(event, TurnFinished):
            ends.append(event.session_key)
        elif isinstance(event, ToolFinished):
            tools.append(event)
        elif isinstance(event, TextDelta) and event.session_key == key:
            shown.append(event.text)

    key = "desktop:bench"
    core.bus.subscribe(seen)
    window = ChatWindow(bridge)
    window.resize(1100, 800)
    window.show()
    await asyncio.wait_for(core.loop.ask("desktop:warm-up", "hello"), 120)  # litellm's import: not measured
    collector = GuiThreadCollector()  # garbage collected as the app does: on this thread, start-up frozen out
    collector.settle()
    window.show_session(key)
    await asyncio.sleep(0.5)
    try:
        await measure(core, bridge, key, streamed, shown, ends, tools, figures, why)
    finally:
        window.hide()
        bridge.close()
        await core.close()
        collector.stop()


async def measure(core: Any, bridge: Any, key: str, streamed: str, shown: list[str], ends: list[str],
                  tools: list[Any], figures: Figures, why: bool) -> None:
    meter = CpuStallMeter(PROBE_MS)
    watchdog = Watchdog(meter)
    if why:
        watchdog.start()
    meter.start()
    started = time.perf_counter()
    bridge.send(key, "start the checks")
    await until(lambda: key in ends, 60, "the tasks to be started")
    shown.clear()
    bridge.send(key, QUESTION)
    asked, asked_wall = time.perf_counter(), time.time()
    await until(lambda: streamed in "".join(shown), 120, "the long answer")
    answered, answered_wall = time.perf_counter(), time.time()
    tasks = core.get(Subagents).of(key)
    await until(lambda: all(t.status == "done" and t.told is not None and t.told.done() for t in tasks), 120,
                "the tasks to finish and be told")
    await until(lambda: key not in core.loop.busy_sessions, 60, "the chat to be idle")
    stall = meter.stop()
    watchdog.running = False
    finished = time.perf_counter()
    worst = meter.worst_at()
    phase = ("while the tasks were started" if worst < asked else "while the answer streamed" if worst < answered
             else "after the answer, as the results were told")
    sub_tools = [t for t in tools if t.session_key.startswith("subagent:")]
    assert len(tasks) == TASKS and all(t.ok for t in sub_tools) and len(sub_tools) == TASKS * len(TOOL_STEPS), \
        (tasks, sub_tools)
    told_while_streaming = sum(1 for t in tasks if t.finished and asked_wall <= t.finished <= answered_wall)
    print(f"{TASKS} background tasks, {len(sub_tools)} tool calls, all ok; {TOKENS:,}-token answer streamed in "
          f"{answered - asked:.1f} s; everything done {finished - started:.1f} s after the first message")
    print(f"  {told_while_streaming} of {TASKS} tasks finished while the answer streamed")
    print(f"  worst GUI stall {ms(stall)} (target <= 16 ms); {meter.over(0.050)} of {len(meter.gaps):,} "
          f"{PROBE_MS} ms timer gaps over 50 ms, {meter.over(0.016)} over 16 ms")
    print(f"  the worst stall ended {worst - started:.1f} s after the first message, {phase}")
    print(f"  GUI thread's own CPU time between two ticks: worst {ms(max(meter.cpu))}; "
          f"load average now {os.getloadavg()[0]:.1f}")
    for stack, count in sorted(watchdog.seen.items(), key=lambda item: -item[1])[:3]:
        print(f"--- GUI thread stalled here ({count} looks 4 ms apart):\n{stack}")
    figures.add(f"{TASKS} subagents x {len(TOOL_STEPS)} tool calls while {TOKENS:,} tokens stream: worst GUI stall",
                f"{ms(stall)} ({phase})", "≤ 16 ms")
    figures.add("... GUI thread's own CPU time between two probe ticks, worst", ms(max(meter.cpu)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    parser.add_argument("--why", action="store_true", help="print where the GUI thread was during long stalls")
    args = parser.parse_args()
    figures = Figures()
    # the server in a process of its own: in this one, its streaming thread would share the interpreter lock
    # with the GUI thread measured, and its stalls would be counted as the app's
    with tempfile.TemporaryDirectory(prefix="bench-subagents-") as tmp, FakeProcess("tests.bench.bench_subagents:model") as fake:
        home = Path(tmp)
        os.environ["NANOBOT_TRAY_HOME"] = str(home)
        os.environ["HOME"] = str(home / "user")  # keep the machine's skills out of the run
        write_config(home, model="openai/test", api_base=fake.base_url, max_subagents=TASKS,
                     context_window_tokens=1_000_000)
        app = QApplication.instance() or QApplication([])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(run(figures, args.why))
    if args.json:
        print(figures.line())


if __name__ == "__main__":
    main()

"""Chat window benchmark: a 10,000-message session and a fast stream, on the qasync loop, offscreen.

Run: python tests/bench/bench_chat.py
Targets (issue 4): opening and scrolling a 10,000-message session must not stall; streaming
2,000 tokens at 200 tokens/s into the shown chat keeps the worst GUI stall at or under 16 ms.
Figures: time to first paint of the long session, worst and median frame scrolling it end to end
(page by page and by dragging the scroll bar), worst GUI stall while streaming (gap between ticks of
a 2 ms timer, minus the interval) and the cost of the updates themselves.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import qasync
import yaml
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication

WORDS = ["the", "file", "folder", "command", "output", "check", "request", "result", "error", "path", "option", "config", "value", "list", "item", "report", "summary", "step", "format", "network", "service", "token", "project", "change", "commit", "branch", "review", "install", "version", "update", "search", "filter", "sort", "first", "next", "finally", "answer"]
TOKENS = 2000
RATE = 200  # tokens per second
FRAME = 1 / 60


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def answer(rng: random.Random, paragraphs: int) -> str:
    parts = []
    for i in range(paragraphs):
        parts.append(" ".join(sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(1, 4))))
        if i % 3 == 1:
            parts.append("\n".join(f"- {sentence(rng, 6)} `opt{j}`" for j in range(3)))
        if i % 4 == 2:
            parts.append("```python\n" + "\n".join(f"def step_{j}(x):\n    return x * {j}" for j in range(4))
                         + "\n```")
    return "\n\n".join(parts)


def long_session(rng: random.Random, key: str, messages: int) -> list[str]:
    """A realistic mix: questions, Markdown answers with code, and tool calls with results."""
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long session"})]
    count = 0
    turn = 0
    while count < messages:
        lines.append(json.dumps({"role": "user", "content": sentence(rng, rng.randint(4, 30))}))
        count += 1
        if turn % 5 == 0 and count + 2 < messages:
            call = {"id": f"c{turn}", "type": "function",
                    "function": {"name": "exec", "arguments": json.dumps({"command": f"ls -la dir{turn}"})}}
            lines.append(json.dumps({"role": "assistant", "content": None, "tool_calls": [call]}))
            lines.append(json.dumps({"role": "tool", "tool_call_id": f"c{turn}", "name": "exec",
                                     "content": "\n".join(sentence(rng, 5) for _ in range(6)), "ok": True}))
            count += 2
        lines.append(json.dumps({"role": "assistant", "content": answer(rng, rng.randint(1, 5))}))
        count += 1
        turn += 1
    return lines


class StallMeter:
    """Worst gap between ticks of a fast precise timer: how long the GUI thread could not react."""

    def __init__(self, interval_ms: int = 2) -> None:
        self.interval = interval_ms / 1000
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.gaps: list[float] = []
        self._last = 0.0

    def start(self) -> None:
        self._last = time.perf_counter()
        self.gaps.clear()
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return max(self.gaps, default=0.0) - self.interval

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def run() -> None:
    from desktop.bus import TextDelta, TurnFinished, TurnStarted
    from desktop.core import build_core
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.chat.window import ChatWindow

    core = build_core()
    bridge = CoreBridge(core)
    window = ChatWindow(bridge)
    window.resize(1100, 800)
    window.show()
    await asyncio.sleep(0.2)
    view = window.view
    rng = random.Random(7)

    key = "desktop:long"
    path = core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(long_session(rng, key, 10_000)) + "\n", encoding="utf-8")
    size_mb = path.stat().st_size / 1e6

    meter = StallMeter()
    meter.start()
    started = time.perf_counter()
    window.show_session(key)
    model = window.models[key]
    while not model.loaded:
        await asyncio.sleep(0.001)
    loaded = time.perf_counter()
    view.viewport().repaint()
    painted = time.perf_counter()
    open_stall = meter.stop()
    print(f"open 10,000-message session ({model.rowCount():,} rows, {size_mb:.1f} MB file):")
    print(f"  time to first paint        {ms(painted - started)}  (load + rows off the GUI thread "
          f"{ms(loaded - started)}, first paint {ms(painted - loaded)})")
    print(f"  worst GUI stall meanwhile  {ms(open_stall)}")

    bar = view.verticalScrollBar()
    frames: list[float] = []
    bar.setValue(bar.maximum())
    for step in (-bar.pageStep(), bar.pageStep()):  # page by page to the top and back, one page a frame
        while 0 < bar.value() + step < bar.maximum() + bar.pageStep():
            bar.setValue(bar.value() + step)
            t = time.perf_counter()
            view.viewport().repaint()
            frames.append(time.perf_counter() - t)
            await asyncio.sleep(max(FRAME - (time.perf_counter() - t), 0))
            if bar.value() in (0, bar.maximum()):
                break
    print(f"scroll end to end and back by pages at 60 frames/s ({len(frames)} frames; rows are laid out "
          "on first sight or ahead in idle time):")
    print(f"  worst frame {ms(max(frames))}, median {ms(statistics.median(frames))}, "
          f"95th percentile {ms(sorted(frames)[int(len(frames) * 0.95)])}")

    jumps: list[float] = []
    for _ in range(60):  # dragging the scroll bar: arbitrary positions
        bar.setValue(rng.randint(0, bar.maximum()))
        t = time.perf_counter()
        view.viewport().repaint()
        jumps.append(time.perf_counter() - t)
        await asyncio.sleep(0)
    print(f"scroll bar jumps (60 random positions): worst frame {ms(max(jumps))}, "
          f"median {ms(statistics.median(jumps))}")

    text = answer(random.Random(11), 40)
    pieces = [text[i:i + 4] for i in range(0, len(text), 4)][:TOKENS]
    view.scroll_to_bottom()
    bridge.event.emit(TurnStarted(key))
    await asyncio.sleep(0.1)
    flushes: list[float] = []
    original_flush = model.flush

    def timed_flush() -> None:
        t = time.perf_counter()
        original_flush()
        view.viewport().repaint()  # the paint the flush causes, measured with it
        flushes.append(time.perf_counter() - t)

    model.flush = timed_flush  # type: ignore[method-assign]
    model._flush.timeout.disconnect()
    model._flush.timeout.connect(timed_flush)
    meter.start()
    t0 = time.perf_counter()
    for i, piece in enumerate(pieces):
        bridge.event.emit(TextDelta(key, piece))
        delay = t0 + (i + 1) / RATE - time.perf_counter()
        await asyncio.sleep(max(delay, 0))
    stream_stall = meter.stop()
    elapsed = time.perf_counter() - t0
    bridge.event.emit(TurnFinished(key, text))
    print(f"stream {len(pieces):,} tokens at {RATE}/s into the 10,000-row chat ({len(text):,} characters, "
          f"{elapsed:.1f} s):")
    print(f"  worst GUI stall {ms(stream_stall)} (target <= 16 ms); {len(flushes)} view updates, "
          f"worst {ms(max(flushes))}, median {ms(statistics.median(flushes))}")
    assert model.rows[-1].text == "".join(pieces)
    window.hide()
    bridge.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-chat-") as tmp:
        home = Path(tmp)
        os.environ["NANOBOT_TRAY_HOME"] = str(home)
        os.environ["HOME"] = str(home / "user")  # keep the machine's skills out of the run
        (home / "config.yaml").write_text(yaml.safe_dump({"model": "openai/bench",
                                                          "api_base": "http://127.0.0.1:9/v1"}))
        app = QApplication.instance() or QApplication([])
        loop = qasync.QEventLoop(app)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(run())


if __name__ == "__main__":
    main()

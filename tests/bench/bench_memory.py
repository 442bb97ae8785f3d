"""Memory benchmark: the history viewer on 100,000 entries and a 10,000-message session.

Run: QT_QPA_PLATFORM=offscreen python tests/bench/bench_memory.py [--json]
Targets (issue 5): viewer opens and shows the newest entries <= 300 ms; substring search over all
entries <= 1 s; 10,000-message session load + prompt build + token estimate <= 200 ms; and how long
consolidation with the scripted loopback model takes to bring that session under budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import keyring  # noqa: E402
import qasync  # noqa: E402
import yaml  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from desktop.core import build_core  # noqa: E402
from desktop.memory import Memory
from desktop.memory.consolidator import budget_of  # noqa: E402
from desktop.memory.history_search import Query, read_newest, search  # noqa: E402
from desktop.providers.tokens import count_text  # noqa: E402
from desktop.session.session import SessionStore  # noqa: E402
from desktop.ui.bridge import CoreBridge  # noqa: E402
from desktop.ui.memory.window import MemoryWindow  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402
from tests.fakeserver import FakeOpenAI  # noqa: E402
from tests.memkeyring import MemoryKeyring  # noqa: E402

WORDS = ("user asked about the project deploy script config meeting notes budget travel plan python error "
         "fixed database backup schedule weekly report summary decided prefers short answers reminder "
         "invoice draft email calendar review branch merged tests passing docs updated").split()
HISTORY_ENTRIES = 100_000
SESSION_MESSAGES = 10_000
FIGURES = Figures()


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def write_history(path: Path, count: int) -> None:
    rng = random.Random(5)
    start = datetime(2025, 1, 1, 8, 0).astimezone()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(1, count + 1):
            content = text(rng, rng.randint(20, 70)) + (" magenta-falcon" if i % 1000 == 0 else "")
            stamp = (start + timedelta(minutes=7 * i)).isoformat(timespec="seconds")
            fh.write(json.dumps({"cursor": i, "timestamp": stamp, "session_key": f"desktop:{i % 40}",
                                 "content": content}) + "\n")


def write_session(store: SessionStore, key: str, count: int) -> None:
    rng = random.Random(9)
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long chat"})]
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(json.dumps({"role": role, "content": text(rng, rng.randint(8, 30)),
                                 "timestamp": "2025-06-01T10:00:00+00:00"}))
    store.directory.mkdir(parents=True, exist_ok=True)
    store.path_for(key).write_text("\n".join(lines) + "\n", encoding="utf-8")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def report(label: str, seconds: float, target: float | None = None, figure: str | None = None) -> None:
    if figure:
        FIGURES.add(f"Memory: {figure}", f"{seconds * 1000:.1f} ms",
                    None if target is None else f"≤ {target * 1000:.0f} ms")
    verdict = "" if target is None else ("  ok" if seconds <= target else f"  OVER target {target * 1000:.0f} ms")
    print(f"{label:<58}{ms(seconds)}{verdict}")


async def until(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError("benchmark step did not finish")
        await asyncio.sleep(0.001)


async def viewer(core, app: QApplication) -> None:  # type: ignore[no-untyped-def]
    path = core.get(Memory).store.history_file
    write_history(path, HISTORY_ENTRIES)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"history.jsonl: {HISTORY_ENTRIES:,} entries, {path.stat().st_size / 1e6:.1f} MB")
    started = time.perf_counter()
    read_newest(core.get(Memory).store.open_history(), 300)
    report("read_newest(300) from the end of the file", time.perf_counter() - started)
    started = time.perf_counter()
    entries = core.get(Memory).store.read_history()
    report("read_history: parse the whole file", time.perf_counter() - started)
    entries.reverse()
    import threading

    for label, query in (("substring search (function, all entries)", Query("magenta-falcon")),
                         ("regex search (function, all entries)", Query(r"backup \w+ schedule", regex=True))):
        started = time.perf_counter()
        hits = search(entries, query, lambda batch: None, threading.Event())
        report(f"{label}: {hits:,} hits", time.perf_counter() - started)

    bridge = CoreBridge(core)
    for label in ("first window of the process", "opened again"):
        started = time.perf_counter()
        window = MemoryWindow(core.get(Memory), bridge)
        window.tabs.setCurrentWidget(window.history)
        window.show()
        tab = window.history
        await until(lambda tab=tab: tab.model.rowCount() > 0)
        app.processEvents()
        tab.table.viewport().repaint()
        report(f"viewer shows the newest entries ({label})", time.perf_counter() - started, 0.300,
               f"history viewer on 100,000 entries shows the newest ({label})")
        await until(lambda tab=tab: tab.loaded and not tab.searching)
        report("... all 100,000 entries loaded behind it", time.perf_counter() - started)
        if label == "first window of the process":
            window.hide()
            window.deleteLater()

    started = time.perf_counter()
    tab.text.setText("magenta-falcon")
    tab.run_search()
    await until(lambda: not tab.searching)
    report(f"viewer substring search, results shown ({tab.model.rowCount()} rows)", time.perf_counter() - started,
           1.0, "substring search over 100,000 history entries, results shown")
    started = time.perf_counter()
    tab.text.setText("schedule")
    tab.run_search()
    await until(lambda: tab.model.rowCount() > 0)
    report("viewer search 'schedule': first matches on screen", time.perf_counter() - started)
    await until(lambda: not tab.searching)
    report(f"... all {tab.model.rowCount():,} matches streamed in", time.perf_counter() - started)
    window.grab().save(str(Path(tempfile.gettempdir()) / "bench-memory-history.png"))
    window.hide()
    bridge.close()


async def session_figures(core, fake: FakeOpenAI) -> None:  # type: ignore[no-untyped-def]
    key = "desktop:long"
    write_session(core.sessions, key, SESSION_MESSAGES)
    consolidator = core.get(Memory).consolidator
    started = time.perf_counter()
    count_text("warm up", core.config.model)
    report("\ntiktoken: load the encoding (once per process)", time.perf_counter() - started)
    started = time.perf_counter()
    session = await core.sessions.load(key)
    loaded = time.perf_counter()
    over = await asyncio.to_thread(consolidator._keep_from, session.messages, consolidator.budget - 1) > 0
    checked = time.perf_counter()
    messages = await asyncio.to_thread(core.context.build_messages, session.history(), "next question", key)
    done = time.perf_counter()
    estimate = await consolidator.estimate(session)
    estimated = time.perf_counter()
    print(f"session: {len(session.messages):,} messages, about {estimate:,} prompt tokens "
          f"({len(messages):,} messages sent; over budget: {over})")
    report("load session file", loaded - started)
    report("token check before the turn (counts newest up to budget)", checked - loaded)
    report("build the prompt", done - checked)
    report("load + token check + prompt build", done - started, 0.200,
           "10,000-message session: load + token check + prompt build")
    report("full token estimate of all 10,000 messages (first time)", estimated - done)
    started = time.perf_counter()
    await consolidator.estimate(session)
    report("full estimate again (token counts remembered)", time.perf_counter() - started)

    started = time.perf_counter()
    await core.provider.chat([{"role": "user", "content": "warm up"}])
    report("first model call of the process (imports litellm)", time.perf_counter() - started)
    fake.requests.clear()
    print(f"budget {budget_of(core.config):,} tokens (window {core.config.context_window_tokens:,}, "
          f"max_tokens {core.config.max_tokens:,})")
    started = time.perf_counter()
    calls = 0
    first_call = 0.0
    while await consolidator.estimate(session) >= consolidator.budget:
        t = time.perf_counter()
        archived = await consolidator.consolidate(session)
        calls += 1
        first_call = first_call or time.perf_counter() - t
        if not archived:
            break
    total = time.perf_counter() - started
    after = await consolidator.estimate(session)
    report("one consolidation call (5 rounds of <= 60 messages)", first_call)
    report("... per round (estimate + summary call + session rewrite)", first_call / 5)
    report(f"under budget after {calls} calls, {len(fake.requests)} summaries "
           f"({after:,} tokens left)", total, figure="consolidate that session under budget (loopback model)")


async def main(app: QApplication) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    os.environ["NANOBOT_TRAY_HOME"] = str(root)
    os.environ["HOME"] = str(root / "user")
    keyring.set_keyring(MemoryKeyring())
    with FakeOpenAI(default=lambda body: {"content": "Summary: the user and the assistant discussed plans."}) as fake:
        root.mkdir(exist_ok=True)
        (root / "config.yaml").write_text(yaml.safe_dump({"model": "openai/test", "api_base": fake.base_url}))
        core = build_core()
        await viewer(core, app)
        await session_figures(core, fake)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    application = QApplication.instance() or QApplication([])
    event_loop = qasync.QEventLoop(application)
    asyncio.set_event_loop(event_loop)
    with event_loop:
        event_loop.run_until_complete(main(application))
    if args.json:
        print(FIGURES.line())

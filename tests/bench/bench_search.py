"""Search-all-chats benchmark (Ctrl+K): how long a scan of a large history takes in its worker thread.

Run: python tests/bench/bench_search.py [--json]
History: 300 chats of 200 messages (about 60,000 messages, tens of MB), written by the real session store.
Figures: a word found in no chat (every file read whole), a common word (the scan stops at 50 chats), a
non-ASCII word (every line parsed), and the empty query (recent chats: first lines only).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.session.search import scan  # noqa: E402
from desktop.session.session import Session, SessionStore  # noqa: E402
from tests.bench.figures import Figures  # noqa: E402

WORDS = ["file", "folder", "command", "output", "check", "request", "result", "error", "path", "option", "config",
         "value", "list", "item", "report", "summary", "step", "format", "network", "service", "project", "change"]
CHATS, MESSAGES = 300, 200


async def history(directory: Path) -> None:
    rng = random.Random(7)
    store = SessionStore(directory)
    for n in range(CHATS):
        session = Session(f"desktop:{n:04x}", metadata={"title": f"Chat about {rng.choice(WORDS)} {n}"})
        messages = [{"role": "user" if m % 2 == 0 else "assistant",
                     "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 120)))}
                    for m in range(MESSAGES)]
        await store.append(session, *messages)


def timed(directory: Path, query: str) -> tuple[float, int]:
    start = time.perf_counter()
    hits = scan(directory, query)
    return time.perf_counter() - start, len(hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="end with the figures as one JSON line")
    args = parser.parse_args()
    figures = Figures()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        asyncio.run(history(directory))
        size = sum(p.stat().st_size for p in directory.glob("*.jsonl")) / 1e6
        print(f"history: {CHATS} chats x {MESSAGES} messages, {size:.1f} MB")
        for label, query in (("word in no chat", "zebra"), ("common word", "network"),
                             ("non-ASCII word", "größe"), ("recent chats", "")):
            seconds, found = timed(directory, query)
            print(f"{label:>16}: {seconds * 1000:7.1f} ms, {found} chats")
            figures.add(f"Search all chats ({CHATS} x {MESSAGES} messages, {size:.0f} MB): {label}",
                        f"{seconds * 1000:.1f} ms")
    if args.json:
        print(figures.line())


if __name__ == "__main__":
    main()

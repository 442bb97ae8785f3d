"""Search across every saved chat (Ctrl+K): titles and the text of the messages a person sees.

Session files are read directly, in a worker thread, newest first, and the scan stops once enough chats
matched, so a large history stays quick. Lines torn by a crash mid-write are skipped, as the session reader
does. A search can be called off (a newer keystroke) and then stops between lines."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from desktop.session.branches import shared_count

LIMIT = 50           # chats listed at most
SNIPPET_BEFORE = 40  # characters of context before the hit
SNIPPET_AFTER = 90   # ... and after it
_JSON_ESCAPED = frozenset('"\\')  # a query with these is not found verbatim in a JSON line


@dataclass(frozen=True)
class ChatHit:
    key: str
    title: str
    updated_at: str  # ISO time of the file's last change
    snippet: str     # the first matching message around the hit; "" when only the title matched
    message: int     # that message's index in the session's messages; -1 when none matched
    matches: int     # how many of its messages match


class _Cancelled(Exception):
    pass


async def search_chats(directory: Path, query: str, limit: int = LIMIT) -> list[ChatHit]:
    """Chats whose title or messages contain `query` (any case), most recently active first; an empty query
    lists the most recent chats. Cancelling the awaiting task stops the scan too."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(scan, directory, query, limit, stop.is_set)
    except asyncio.CancelledError:
        stop.set()
        raise


def scan(directory: Path, query: str, limit: int = LIMIT,
         cancelled: Callable[[], bool] = lambda: False) -> list[ChatHit]:
    """The blocking search behind `search_chats`."""
    needle = query.strip().lower()
    hits: list[ChatHit] = []
    try:
        for path in _newest_first(directory):
            if len(hits) >= limit:
                break
            hit = _search_file(path, needle, cancelled)
            if hit is not None:
                hits.append(hit)
    except _Cancelled:
        return []
    return hits


def message_text(message: dict[str, Any]) -> str:
    """What the chat shows of a message as text: user questions and answers (not tool output, reasoning or
    a failed turn's placeholder)."""
    if message.get("role") not in ("user", "assistant") or message.get("failed"):
        return ""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def snippet(text: str, at: int, length: int) -> str:
    """One line of `text` around the hit at `at`, cut at word boundaries, with … where it was cut."""
    start = max(at - SNIPPET_BEFORE, 0)
    end = min(at + length + SNIPPET_AFTER, len(text))
    if start > 0:
        space = text.find(" ", start, at)
        start = space + 1 if space != -1 else start
    if end < len(text):
        space = text.rfind(" ", at + length, end)
        end = space if space != -1 else end
    return f"{'…' if start > 0 else ''}{' '.join(text[start:end].split())}{'…' if end < len(text) else ''}"


def _newest_first(directory: Path) -> list[Path]:
    stamped = []
    for path in directory.glob("*.jsonl"):
        try:
            stamped.append((path.stat().st_mtime, path))
        except OSError:  # deleted while listing
            continue
    return [path for _, path in sorted(stamped, reverse=True)]


def _search_file(path: Path, needle: str, cancelled: Callable[[], bool]) -> ChatHit | None:
    # An ASCII query without JSON escapes appears verbatim in the raw line of any message containing it, so most
    # lines are ruled out without parsing them.
    quick = needle.isascii() and needle.isprintable() and not _JSON_ESCAPED & set(needle)
    title = ""
    first: tuple[int, str] | None = None
    matches = 0
    index = -1
    try:
        stamp = datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat(timespec="seconds")
        with open(path, encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh):
                if cancelled():
                    raise _Cancelled
                if number > 0 and not needle:
                    break  # recent chats: the title is all that is shown
                if number > 0 and quick and needle not in line.lower():
                    # a message without the hit, unparsed: a bare "role" is only ever a key in JSON, and a line
                    # torn by a crash (which the session reader skips) does not end its object
                    index += '"role"' in line and line.rstrip().endswith("}")
                    continue
                record = _record(line)
                if number == 0 and record.get("_type") == "metadata":
                    title = str(record.get("title") or "")
                    index += shared_count(record)  # a branch's file starts after the messages it shares
                    continue
                if "role" not in record:
                    continue
                index += 1
                text = message_text(record)
                at = text.lower().find(needle) if needle else -1
                if at != -1:
                    matches += 1
                    first = first or (index, snippet(text, at, len(needle)))
    except OSError:  # deleted or unreadable: not a result
        return None
    title = title or unquote(path.stem)
    if needle and first is None and needle not in title.lower():
        return None
    message, text = first if first is not None else (-1, "")
    return ChatHit(unquote(path.stem), title, stamp, text, message, matches)


def _record(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {}  # torn by a crash mid-write
    return value if isinstance(value, dict) else {}

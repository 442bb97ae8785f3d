"""Searching every saved chat (Ctrl+K), on session files written by the real store."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from desktop.session.search import ChatHit, scan, search_chats
from desktop.session.session import Session, SessionStore


async def saved(store: SessionStore, key: str, title: str, *messages: dict[str, Any], age: float = 0) -> Session:
    session = Session(key, metadata={"title": title})
    await store.append(session, *messages)
    when = 1_700_000_000 - age  # file times decide the order: the newest chat first
    os.utime(store.path_for(key), (when, when))
    return session


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answer(text: str | None, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def by_key(hits: list[ChatHit]) -> dict[str, ChatHit]:
    return {hit.key: hit for hit in hits}


async def test_titles_and_messages_match_in_any_case_with_a_snippet_and_the_message(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    long_before = "word " * 30
    await saved(store, "desktop:a", "Trip planning",
                user("Where should I go in spring?"),
                answer(f"{long_before}Consider the Lisbon coast, it is mild in April. {'more ' * 40}"),
                user("and lisbon food?"), age=10)
    await saved(store, "desktop:b", "Lisbon notes", user("nothing about it here"), age=5)
    await saved(store, "desktop:c", "Taxes", user("receipts"))

    hits = await search_chats(tmp_path, "  LISBON ")
    assert [hit.key for hit in hits] == ["desktop:b", "desktop:a"]  # newest first; "Taxes" does not match
    trip = by_key(hits)["desktop:a"]
    assert trip.title == "Trip planning" and trip.matches == 2
    loaded = await SessionStore(tmp_path).load("desktop:a")
    assert "Lisbon" in str(loaded.messages[trip.message]["content"])  # the first matching message
    assert trip.snippet.startswith("…") and trip.snippet.endswith("…")
    assert "Consider the Lisbon coast" in trip.snippet and len(trip.snippet) < 160
    notes = by_key(hits)["desktop:b"]
    assert (notes.snippet, notes.message, notes.matches) == ("", -1, 0)  # only its title matched


async def test_an_empty_query_lists_the_most_recent_chats_up_to_the_limit(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    for n in range(6):
        await saved(store, f"desktop:{n}", f"Chat {n}", user(f"question {n}"), age=n)
    hits = scan(tmp_path, "", limit=4)
    assert [hit.title for hit in hits] == ["Chat 0", "Chat 1", "Chat 2", "Chat 3"]
    assert all(hit.snippet == "" and hit.message == -1 for hit in hits)
    assert len(scan(tmp_path, "question", limit=2)) == 2


async def test_only_what_the_chat_shows_as_text_is_searched(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    await saved(store, "desktop:tools", "Files",
                user("list the folder"),
                answer(None, tool_calls=[{"id": "c1", "type": "function",
                                          "function": {"name": "list_dir", "arguments": '{"path": "zebra"}'}}]),
                {"role": "tool", "tool_call_id": "c1", "name": "list_dir", "content": "zebra.txt"},
                answer("zebra-less answer", failed=True, error="Connection refused zebra"),
                answer("You have one file.", reasoning_content="zebra thoughts"))
    assert scan(tmp_path, "zebra") == []
    hit = scan(tmp_path, "ONE FILE")[0]
    assert hit.message == 4 and hit.snippet == "You have one file."


async def test_quotes_accents_and_escaped_files_are_found(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    await saved(store, "desktop:q", "Quotes", user('He said "hello there" and left\\right'))
    escaped = {"_type": "metadata", "key": "cli:old", "title": "Older file"}
    message = {"role": "user", "content": [{"type": "text", "text": "Grüße aus Köln"}]}
    (tmp_path / "cli%3Aold.jsonl").write_text(  # written by a tool that escapes non-ASCII text
        "\n".join(json.dumps(r, ensure_ascii=True) for r in (escaped, message)) + "\n", encoding="utf-8")

    assert [h.key for h in scan(tmp_path, '"HELLO there"')] == ["desktop:q"]
    assert [h.key for h in scan(tmp_path, "left\\right")] == ["desktop:q"]
    hit = scan(tmp_path, "grüße")[0]
    assert (hit.key, hit.title, hit.snippet, hit.message) == ("cli:old", "Older file", "Grüße aus Köln", 0)


async def test_torn_and_broken_lines_are_skipped_and_message_numbers_stay_right(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    await saved(store, "desktop:torn", "Torn", user("first"), answer("second"))
    path = store.path_for("desktop:torn")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"role": "user", "content": "not fini\n')  # a crash mid-write, then the app went on
        fh.write(json.dumps(user("the needle is here")) + "\n")
        fh.write(b"\xff\xfe broken bytes\n".decode("latin-1"))
        fh.write('{"role": "assistant", "content": "needle cut')
    loaded = await SessionStore(tmp_path).load("desktop:torn")
    for query in ("needle", "NEEDLE IS"):  # the fast path (ASCII) and the same with a space
        hit = scan(tmp_path, query)[0]
        assert loaded.messages[hit.message]["content"] == "the needle is here" and hit.matches == 1
    hit = scan(tmp_path, "néedle")  # non-ASCII: every line is parsed
    assert hit == []


async def test_a_cancelled_search_stops(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    await saved(store, "desktop:x", "X", user("findable"))
    assert scan(tmp_path, "findable", cancelled=lambda: True) == []
    task = asyncio.ensure_future(search_chats(tmp_path, "findable"))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [h.key for h in await search_chats(tmp_path, "findable")] == ["desktop:x"]

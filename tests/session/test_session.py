"""SessionStore keeps one live Session per chat: every turn and window appends through the same object."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop.session.session import SessionStore


async def test_a_chat_loaded_twice_at_once_is_one_session(tmp_path: Path) -> None:
    """The chat window opening a chat while its first message is sent loads it twice at once. A second read
    landing after the first turn's appends used to replace the live session with the empty one it read: the
    next turn went out without the chat's history, and the chat took the next question as its title."""
    store = SessionStore(tmp_path)
    window, turn = await asyncio.gather(store.load("desktop:asks"), store.load("desktop:asks"))
    assert window is turn
    turn.metadata["title"] = "make it"
    await store.append(turn, {"role": "user", "content": "make it"})
    again = await store.load("desktop:asks")
    assert again is turn and again.title == "make it" and [m["content"] for m in again.messages] == ["make it"]


async def test_a_chat_deleted_while_it_loads_stays_deleted(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    session = await store.load("desktop:old")
    await store.append(session, {"role": "user", "content": "hello"})
    fresh = SessionStore(tmp_path)  # as after a restart: nothing loaded yet
    loading = asyncio.ensure_future(fresh.load("desktop:old"))
    await asyncio.sleep(0)  # the read has started
    await fresh.delete("desktop:old")
    await loading
    assert not fresh.path_for("desktop:old").exists()
    assert (await fresh.load("desktop:old")).messages == []  # not the deleted chat, kept in memory

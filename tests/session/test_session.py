"""Chats on disk (desktop/session/session.py): SessionStore keeps one live Session per chat, every turn and window
appending through the same object; a torn or cut-off file still loads as a valid history; titles and the order
of last use survive a restart."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from desktop.core import Core, build_core
from desktop.kernel.bus import TurnError, TurnFinished
from desktop.kernel.notices import Notice
from desktop.kernel.paths import home
from desktop.session import session as session_module
from desktop.session.pins import set_pinned
from desktop.session.session import SessionStore
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


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


async def test_a_tool_call_cut_off_by_a_crash_is_closed_on_load(core: Core, chat: Conversation,
                                                                 fake: FakeOpenAI) -> None:
    """A kill mid-tool leaves a call without a result; the next request must still be a valid history."""
    call = {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": "{\"command\": \"sleep 99\"}"}}
    lines = [{"_type": "metadata", "key": chat.key, "title": "Crashed"},
             {"role": "user", "content": "run it"},
             {"role": "assistant", "content": None, "tool_calls": [call]}]
    path = core.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    fake.add({"content": "sorry, that was cut off"})
    await chat.ask("what happened?")
    sent = fake.requests[-1]["messages"]
    at = next(i for i, m in enumerate(sent) if m.get("tool_calls"))
    assert sent[at + 1]["role"] == "tool" and sent[at + 1]["tool_call_id"] == "call_1"
    assert "Interrupted" in sent[at + 1]["content"] and sent[at + 2]["role"] == "user"
    saved = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert [m.get("role") for m in saved[1:]] == ["user", "assistant", "tool", "user", "assistant"]

async def test_after_a_restart_chats_are_listed_by_when_they_were_last_used(
        model_config: dict[str, Any], memory_keyring: Any, fake: FakeOpenAI, monkeypatch: Any) -> None:
    ticks = itertools.count()  # one second later at every call: a later message is a later time
    monkeypatch.setattr("desktop.session.session.now_iso",
                        lambda: (datetime(2026, 11, 24, 10, tzinfo=UTC) + timedelta(seconds=next(ticks))).isoformat())
    first = build_core()
    await first.start()
    for key, text in (("desktop:old", "first question"), ("desktop:new", "second chat"),
                      ("desktop:old", "and a follow-up")):
        fake.add({"content": "ok"})
        await first.loop.ask(key, text)
    assert [i.key for i in await first.sessions.list()] == ["desktop:old", "desktop:new"]
    await first.close()
    again = build_core()  # the chat used last comes first, as before the restart
    assert [i.key for i in await again.sessions.list()] == ["desktop:old", "desktop:new"]
    session = await again.sessions.load("desktop:old")
    assert session.metadata["updated_at"] > (await again.sessions.load("desktop:new")).metadata["updated_at"]

async def test_chat_titles_survive_a_restart(model_config: dict[str, Any], memory_keyring: Any,
                                             fake: FakeOpenAI) -> None:
    first = build_core()
    await first.start()
    fake.add({"content": "Paris."})
    await first.loop.ask("desktop:trip", "Where should we go in spring?")
    await first.close()
    again = build_core()  # a new run of the app on the same home
    listed = {info.key: info.title for info in await again.sessions.list()}
    assert listed["desktop:trip"] == "Where should we go in spring?"
    lines = (home().sessions_dir / "desktop%3Atrip.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["title"] == "Where should we go in spring?"

async def test_corrupted_session_file_loads(core: Core, fake: FakeOpenAI) -> None:
    chat = Conversation(core, chat_id="torn")
    path = core.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"_type": "metadata", "key": chat.key}) + "\n"
                    + json.dumps({"role": "user", "content": "old question"}) + "\n"
                    + json.dumps({"role": "assistant", "content": "old answer"}) + "\n"
                    + '{"role": "user", "content": "half writ')
    end = await chat.ask("still there?")
    assert isinstance(end, TurnFinished)
    sent = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "old question" in sent and "old answer" in sent


async def test_the_message_after_a_line_torn_by_a_crash_survives_a_restart(
        model_config: dict[str, Any], memory_keyring: Any, fake: FakeOpenAI) -> None:
    """Power lost mid-append leaves the chat's file ending in half a line. The next message used to be appended
    onto that half, making one unreadable line of both: after the next restart the question was gone."""
    first = build_core()
    await first.start()
    chat = Conversation(first, chat_id="torn")
    path = first.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"_type": "metadata", "key": chat.key}) + "\n"
                    + json.dumps({"role": "user", "content": "old question"}) + "\n"
                    + '{"role": "assistant", "content": "half writ', encoding="utf-8")
    fake.add({"content": "new answer"})
    assert isinstance(await chat.ask("new question"), TurnFinished)
    await first.close()
    again = build_core()
    await again.start()
    try:
        shown = [m.get("content") for m in (await again.sessions.load(chat.key)).messages]
    finally:
        await again.close()
    assert shown == ["old question", "new question", "new answer"]


async def test_a_chat_damaged_by_hand_still_answers_and_its_file_is_kept_aside_before_a_rewrite(
        core: Core, fake: FakeOpenAI) -> None:
    """A line of bytes that are not UTF-8, a message whose tool calls are not a list of calls, a word for a count (hand edits):
    the chat used to hang on its next turn, and pinning it failed. Now it answers with what can be read, and
    the first rewrite, which leaves the damaged lines out, keeps the file as it was beside it and says where."""
    chat = Conversation(core, chat_id="edited")
    notices: list[Notice] = []
    core.bus.subscribe(lambda e: notices.append(e) if isinstance(e, Notice) else None)
    path = core.sessions.path_for(chat.key)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = b"".join(json.dumps(x).encode() + b"\n" for x in (
        {"_type": "metadata", "key": chat.key, "title": "Plans", "last_consolidated": "none"},
        {"role": "user", "content": "old question"},
        {"role": "assistant", "content": None, "tool_calls": [5, {"id": "c1", "function": "exec"}]})
    ) + b"\xff\xfe\x00 not a line\n" + json.dumps({"role": "assistant", "content": "old answer"}).encode() + b"\n"
    path.write_bytes(written)
    fake.add({"content": "new answer"})
    assert isinstance(await chat.ask("still there?", timeout=20), TurnFinished)
    sent = [m.get("content") for m in fake.requests[-1]["messages"]]
    assert "old question" in sent and "old answer" in sent
    assert not list(path.parent.glob("*.damaged-*"))  # appending drops nothing: no copy yet
    await set_pinned(core.sessions, await core.sessions.load(chat.key), True)
    [kept] = path.parent.glob("*.damaged-*")
    assert kept.read_bytes().startswith(written)
    [notice] = notices
    assert "Plans" in notice.body and str(kept) in notice.body
    assert [m.get("content") for m in (await core.sessions.load(chat.key)).messages] == [
        "old question", "old answer", "still there?", "new answer"]


async def test_a_turn_still_running_when_its_chat_is_deleted_does_not_bring_it_back(tmp_path: Path) -> None:
    """Deleting a chat in the window while its answer, or the consolidation after it, is still being saved:
    the late writes used to create the file again, and the deleted chat was back at the next start."""
    store = SessionStore(tmp_path)
    turn = await store.load("desktop:gone")
    await store.append(turn, {"role": "user", "content": "Plan my week"})
    await store.delete("desktop:gone")
    await store.append(turn, {"role": "assistant", "content": "Monday: ..."})
    turn.metadata["last_consolidated"] = 2
    await store.rewrite(turn)
    assert not store.path_for("desktop:gone").exists()
    assert [info.key for info in await SessionStore(tmp_path).list()] == []


async def test_a_message_the_chat_file_could_not_take_is_not_shown_as_kept_and_the_turn_says_so(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    """A write that fails (a full disk; here a folder where the chat's file goes) used to leave the message in the
    open chat as if saved, with the file lacking it, and the turn ended on "Internal error"."""
    fake.add({"content": "Noted."})
    assert isinstance(await chat.ask("first"), TurnFinished)
    path = core.sessions.path_for(chat.key)
    path.unlink()
    path.mkdir()
    end = await chat.ask("second")
    assert isinstance(end, TurnError) and "could not be saved" in end.message
    session = await core.sessions.load(chat.key)
    assert [m["content"] for m in session.messages] == ["first", "Noted."]


async def test_a_stop_during_a_messages_write_keeps_the_open_chat_as_its_file_has_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread's write cannot be stopped: a Stop (a cancelled turn) landing while a message is written still
    leaves the open chat holding what its file holds, or the next turn's model would not see a message the file
    and a reload show."""
    store = SessionStore(tmp_path)
    session = await store.load("desktop:stopped")
    writing, go_on = threading.Event(), threading.Event()
    write = session_module.append_jsonl

    def held_write(path: Path, records: list[dict[str, Any]], **kwargs: Any) -> None:
        writing.set()
        go_on.wait(10)
        write(path, records, **kwargs)

    monkeypatch.setattr(session_module, "append_jsonl", held_write)
    appending = asyncio.create_task(store.append(session, {"role": "user", "content": "kept"}))
    assert await asyncio.to_thread(writing.wait, 10)
    appending.cancel()
    go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await appending
    assert [m["content"] for m in session.messages] == ["kept"]
    assert [m["content"] for m in (await SessionStore(tmp_path).load("desktop:stopped")).messages] == ["kept"]

"""Asking the agent from code: one call that waits for the turn answering it, and what that turn leaves behind."""

from __future__ import annotations

import asyncio
import itertools
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from desktop.core import Core, build_core
from desktop.kernel.bus import MessageKind, OutboundMessage, TextDelta, TurnFinished
from desktop.kernel.paths import home
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


async def test_ask_returns_the_answer_carried_once(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "Four."})
    end = await chat.core.loop.ask(chat.key, "2+2?")
    assert isinstance(end, TurnFinished) and end.content == "Four."
    assert [e for e in chat.events if isinstance(e, OutboundMessage)] == []  # the answer is not sent twice
    assert [e.content for e in chat.of(TurnFinished)] == ["Four."]


async def test_a_message_joining_a_running_turn_is_answered_by_that_turn(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "delay": 0.4},
             {"content": "Listed, and noted your follow-up."})
    first = asyncio.ensure_future(chat.core.loop.ask(chat.key, "list the workspace"))
    await asyncio.sleep(0.2)
    second = await asyncio.wait_for(chat.core.loop.ask(chat.key, "also, hurry"), 30)
    assert second == await first and second.content == "Listed, and noted your follow-up."
    assert any(m.get("content") == "also, hurry" for m in fake.requests[-1]["messages"])


async def test_asking_for_another_chat_does_not_wait_for_this_one(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "slow", "delay": 1.0}, {"content": "quick"})
    slow = asyncio.ensure_future(chat.core.loop.ask("cli:slow", "take your time"))
    await asyncio.sleep(0.1)
    quick = await asyncio.wait_for(chat.core.loop.ask("cli:quick", "and you?"), 30)
    assert quick.content == "quick" and not slow.done()
    assert (await slow).content == "slow"


async def test_a_command_is_answered_through_ask_too(chat: Conversation) -> None:
    end = await chat.core.loop.ask(chat.key, "/stop")
    assert isinstance(end, TurnFinished) and end.content == "Nothing is running."


async def test_stop_ends_the_running_turn_keeping_its_start_and_says_when_nothing_runs(
        chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "The first part of a long answer", "chunk": 6, "hang": 10})
    story = asyncio.ensure_future(chat.core.loop.ask(chat.key, "tell me a story"))
    await chat.first(TextDelta)
    stopped = await asyncio.wait_for(chat.core.loop.stop(chat.key), 30)
    assert isinstance(stopped, TurnFinished) and stopped.stopped and stopped.content == "Stopped."
    told = await asyncio.wait_for(story, 30)
    assert isinstance(told, TurnFinished) and told.stopped and told.content.startswith("The fi")
    idle = await asyncio.wait_for(chat.core.loop.stop(chat.key), 30)
    assert isinstance(idle, TurnFinished) and idle.content == "Nothing is running." and not idle.stopped


async def test_a_scheduled_message_is_kept_with_its_kind_and_does_not_title_the_chat(
        core: Core, fake: FakeOpenAI) -> None:
    fake.add({"content": "Time to stretch!"}, {"content": "ok"})
    await core.loop.ask("desktop:r", "Reminder due: stretch", kind=MessageKind.SCHEDULED)
    await core.loop.ask("desktop:r", "thanks, what next?")
    session = await core.sessions.load("desktop:r")
    assert session.messages[0]["kind"] == "scheduled" and "kind" not in session.messages[2]
    assert session.title == "thanks, what next?"


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

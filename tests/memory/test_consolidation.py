"""Consolidation against the scripted model server: trigger at the budget, stop at half of it, cut at
user turns, raw archive when the summary fails, /new archives in the background."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from desktop.memory import Memory
from desktop.memory.consolidator import MAX_CHUNK_MESSAGES, MAX_ROUNDS, budget_of
from desktop.providers.token_bound import messages_bound
from desktop.session.session import Session, SessionStore
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI, echo_step

WORDS = " ".join(f"w{i}" for i in range(60))  # about 120 tokens


def summarise_or_echo(body: dict[str, Any]) -> dict[str, Any]:
    """Turn requests carry tools; summary requests do not."""
    if body.get("tools"):
        return echo_step(body)
    return {"content": f"Summary of {len(transcript_lines(body))} messages."}


def transcript_lines(request: dict[str, Any]) -> list[str]:
    return request["messages"][-1]["content"].splitlines()


def summary_requests(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r for r in fake.requests if not r.get("tools")]


def history(core: Core) -> list[dict[str, Any]]:
    path = core.get(Memory).store.history_file
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def fill(core: Core, key: str, turns: int, with_tools: bool = False) -> Session:
    """Write a long conversation through the real session store (as earlier turns would have)."""
    session = await core.sessions.load(key)
    for n in range(turns):
        messages: list[dict[str, Any]] = [{"role": "user", "content": f"question {n}: {WORDS}"}]
        if with_tools and n % 2:
            messages += [{"role": "assistant", "content": None, "tool_calls": [
                             {"id": f"c{n}", "type": "function",
                              "function": {"name": "list_dir", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": f"c{n}", "name": "list_dir", "content": WORDS}]
        messages.append({"role": "assistant", "content": f"answer {n}: {WORDS}"})
        await core.sessions.append(session, *messages)
    return session


def set_budget(core: Core, budget: int) -> None:
    core.config.max_tokens = 100
    core.config.context_window_tokens = budget + 100 + 1024
    assert budget_of(core.config) == budget


async def test_triggers_at_the_budget_and_stops_at_half(core: Core, fake: FakeOpenAI) -> None:
    fake.default = summarise_or_echo
    consolidator = core.get(Memory).consolidator
    session = await fill(core, "cli:long", 30)
    estimate = await consolidator.estimate(session)

    set_budget(core, estimate + 1)  # one token short of the budget: nothing happens
    assert await consolidator.consolidate(session) == 0
    assert summary_requests(fake) == [] and history(core) == []

    set_budget(core, estimate)  # reaching the budget triggers
    rounds = await consolidator.consolidate(session)
    assert 1 <= rounds <= MAX_ROUNDS
    assert await consolidator.estimate(session) <= estimate // 2
    entries = history(core)
    assert len(entries) == rounds == len(summary_requests(fake))
    assert [e["cursor"] for e in entries] == list(range(1, rounds + 1))
    assert all(e["session_key"] == "cli:long" and e["content"].startswith("Summary of") for e in entries)
    archived = sum(len(transcript_lines(r)) for r in summary_requests(fake))
    assert session.last_consolidated == archived  # every archived message counted once
    saved = await SessionStore(core.sessions.directory).load("cli:long")  # persisted, not only in memory
    assert saved.last_consolidated == archived and len(saved.messages) == len(session.messages)
    assert "question 29" in json.dumps(session.history())  # the recent turns stay in the prompt


async def test_cuts_only_at_user_turns_in_chunks_of_at_most_sixty(core: Core, fake: FakeOpenAI) -> None:
    fake.default = summarise_or_echo
    session = await fill(core, "cli:tools", 120, with_tools=True)  # 300 messages, tool steps in odd turns
    set_budget(core, await core.get(Memory).consolidator.estimate(session) // 4)  # far over budget
    rounds = await core.get(Memory).consolidator.consolidate(session)
    assert rounds == MAX_ROUNDS  # stopped by the round limit, not by reaching the target
    cut = 0
    for request in summary_requests(fake):
        chunk = transcript_lines(request)
        assert len(chunk) <= MAX_CHUNK_MESSAGES
        assert chunk[0].startswith("[") and "] USER: question" in chunk[0]
        cut += len(chunk)
        assert session.messages[cut]["role"] == "user"  # the next chunk starts a turn
    assert session.last_consolidated == cut
    assert session.history()[0]["role"] == "user"


async def test_failing_summary_archives_raw_and_still_advances(core: Core, fake: FakeOpenAI) -> None:
    fake.default = lambda body: echo_step(body) if body.get("tools") else {"status": 500}
    session = await fill(core, "cli:raw", 20)
    set_budget(core, await core.get(Memory).consolidator.estimate(session))
    rounds = await core.get(Memory).consolidator.consolidate(session)
    assert rounds >= 1
    entries = history(core)
    assert len(entries) == rounds
    assert entries[0]["content"].startswith("[Raw archive: no summary could be made")
    assert "question 0: w0 w1" in entries[0]["content"] and "answer 0: w0" in entries[0]["content"]
    assert session.last_consolidated > 0
    saved = await SessionStore(core.sessions.directory).load("cli:raw")
    assert saved.last_consolidated == session.last_consolidated


async def test_runs_after_the_reply_without_delaying_it(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    fake.default = lambda body: echo_step(body) if body.get("tools") else {"content": "Summary.", "delay": 1.5}
    await chat.ask("warm up")  # the first call of a process loads litellm: keep that out of the timing
    session = await fill(core, chat.key, 30)
    question = messages_bound([{"role": "user", "content": "one more"}])
    set_budget(core, await core.get(Memory).consolidator.estimate(session) + question + 1)  # fits until answered
    end = await chat.ask("one more")
    assert isinstance(end, TurnFinished) and end.content == "echo: one more"
    assert not history(core)  # the reply came while the summary (1.5 s to answer) was still being written
    await asyncio.wait_for(_until(lambda: history(core) and session.last_consolidated > 0), 20)
    assert history(core)[0]["content"] == "Summary."


async def test_a_turn_that_would_not_fit_is_consolidated_first(core: Core, chat: Conversation,
                                                               fake: FakeOpenAI) -> None:
    fake.default = summarise_or_echo
    session = await fill(core, chat.key, 30)
    set_budget(core, await core.get(Memory).consolidator.estimate(session) - 50)  # already over before the turn
    end = await chat.ask("does it fit now?")
    assert isinstance(end, TurnFinished)
    first_turn = next(i for i, r in enumerate(fake.requests) if r.get("tools"))
    assert first_turn > 0 and not fake.requests[0].get("tools")  # summaries were made before the turn's call
    sent = json.dumps(fake.requests[first_turn]["messages"])
    assert "question 0:" not in sent and "question 29:" in sent and "does it fit now?" in sent


async def test_two_triggers_for_one_session_never_overlap(core: Core, fake: FakeOpenAI) -> None:
    fake.default = lambda body: echo_step(body) if body.get("tools") else {"content": "Summary.", "delay": 0.3}
    session = await fill(core, "cli:twice", 40)
    set_budget(core, await core.get(Memory).consolidator.estimate(session))
    consolidator = core.get(Memory).consolidator
    await asyncio.gather(consolidator.after_turn(session), consolidator.after_turn(session))
    archived = sum(len(transcript_lines(r)) for r in summary_requests(fake))
    assert archived == session.last_consolidated  # no message archived twice


async def test_new_keeps_the_chat_and_archives_it_in_the_background(core: Core, chat: Conversation,
                                                                    fake: FakeOpenAI) -> None:
    fake.default = lambda body: (echo_step(body) if body.get("tools")
                                 else {"content": "They asked to remember the blue door.", "delay": 1.5})
    await chat.ask("remember the blue door")
    reply = await chat.ask("/new")
    assert reply.content.startswith("Started a new conversation")
    assert not history(core)  # the summary (1.5 s) is made after the reply
    assert (await core.sessions.load(chat.key)).messages == []
    (kept,) = [i for i in await core.sessions.list() if i.key != chat.key]
    assert kept.title == "remember the blue door" and kept.message_count == 2
    await asyncio.wait_for(_until(lambda: history(core)), 20)
    (entry,) = history(core)
    assert entry["content"] == "They asked to remember the blue door." and entry["session_key"] == kept.key
    assert "remember the blue door" in transcript_lines(summary_requests(fake)[0])[0]

    await asyncio.wait_for(_until(lambda: _on_disk(core, kept.key).last_consolidated == 2), 20)
    old = Conversation(core, chat_id=kept.key.partition(":")[2])
    await old.ask("and the red one?")  # the kept chat goes on, with its history and nothing archived twice
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "remember the blue door" not in sent and "and the red one?" in sent


def _on_disk(core: Core, key: str) -> Session:
    """The session as a restarted app would read it."""
    return SessionStore(core.sessions.directory)._read(key)


async def _until(predicate: Any) -> None:
    while not predicate():
        await asyncio.sleep(0.02)

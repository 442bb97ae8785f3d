"""A chat's usage and each answer's, through the real core and the scripted server: every call of a turn is
counted under the message it answers (a message typed into the running turn starts its own answer), an
answer sums its calls, a question asked again in its place (Regenerate) has only its own, and a chat's total is
every call made for it since it was created."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from desktop.core import Core
from desktop.kernel.bus import ToolStarted, TurnFinished
from desktop.kernel.work import Source
from desktop.usage.chats import ChatUsage, created_at, read_chat
from desktop.usage.records import CallRecord
from desktop.usage.report import Totals
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.usage.test_counting import counts, recorded


def figures(totals: Totals) -> tuple[int, int, int, int]:
    return totals.calls, totals.prompt_tokens, totals.completion_tokens, totals.cached_tokens


async def test_each_answer_sums_the_calls_that_answer_its_question(chat: Conversation, core: Core,
                                                                   fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1200, 40, 1000)},
             {"content": "Your workspace holds the usual files.", "usage": counts(1350, 12, 1200)},
             {"content": "Nothing else.", "usage": counts(3000, 100)})
    await chat.ask("what is in my workspace?")
    await chat.ask("anything else?")
    records = await recorded(core)
    messages = (await core.sessions.load(chat.key)).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert [r.question for r in records] == [0, 0, 4]  # as read back from the file
    usage = ChatUsage(records)
    assert figures(usage.answer(messages, 3)) == (2, 2550, 52, 2200)  # the tool call's and the answer's
    assert figures(usage.answer(messages, 1)) == (2, 2550, 52, 2200)  # any message of that answer
    assert figures(usage.answer(messages, 5)) == (1, 3000, 100, 0)
    assert figures(usage.total) == (3, 5550, 152, 2200)


async def test_a_message_typed_into_the_running_turn_has_the_calls_made_after_it(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 1"}}], "usage": counts(100, 10)},
             {"content": "Done, and it is noon.", "usage": counts(200, 20)})
    await chat.send("run it")
    await chat.first(ToolStarted)
    await chat.send("and tell me the time")
    assert isinstance(await chat.wait_end(), TurnFinished)
    messages = (await core.sessions.load(chat.key)).messages
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user", "assistant"]
    usage = ChatUsage(await recorded(core))
    assert figures(usage.answer(messages, 1)) == (1, 100, 10, 0)
    assert figures(usage.answer(messages, 4)) == (1, 200, 20, 0)


async def test_an_answer_asked_for_again_has_only_its_own_calls(chat: Conversation, core: Core,
                                                              fake: FakeOpenAI) -> None:
    fake.add({"content": "First try.", "usage": counts(500, 50)}, {"content": "Second try.", "usage": counts(600, 60)})
    await chat.ask("tell me a joke")
    await asyncio.sleep(1.1)  # the session keeps when a message was saved to the second
    await chat.send("tell me a joke", redo=True)  # Regenerate
    assert isinstance(await chat.wait_end(2), TurnFinished)
    messages = (await core.sessions.load(chat.key)).messages
    assert [m.get("content") for m in messages] == ["tell me a joke", "Second try."]
    usage = ChatUsage(await recorded(core))
    assert figures(usage.answer(messages, 1)) == (1, 600, 60, 0)
    assert figures(usage.total) == (2, 1100, 110, 0)  # what the chat used: the first try too


def test_a_chat_has_the_calls_made_for_it_since_it_was_created(tmp_path: Path) -> None:
    from desktop.usage.records import UsageLog

    log = UsageLog(tmp_path)
    now = time.time()
    lines = [CallRecord(now - 600, Source.CHAT, "desktop:a", "m", 9, 9, 0, None),  # a conversation /new set aside
             CallRecord(now - 60, Source.CHAT, "desktop:a", "m", 10, 1, 0, None, question=0),
             CallRecord(now - 50, Source.CHAT, "desktop:b", "m", 20, 2, 0, None, question=0),
             CallRecord(now - 40, Source.SUBAGENT, "desktop:a", "m", 30, 3, 0, 0.5)]
    log.path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in lines))
    since = created_at({"created_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now - 120))})
    read = read_chat(log, "desktop:a", since)
    assert [(r.prompt_tokens, r.question) for r in read] == [(10, 0), (30, -1)]
    assert figures(ChatUsage(read).total) == (2, 40, 4, 0) and ChatUsage(read).total.cost_usd == 0.5
    assert list(ChatUsage(read).by_source) == [Source.CHAT, Source.SUBAGENT]

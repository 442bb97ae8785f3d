"""Regenerated answers kept as alternatives (desktop/session/alternatives.py), through real turns: each Regenerate
keeps the answer it replaces on the chat's file, never sent to the model; choosing one makes it the history the
next question carries, through a restart; a branch sharing the swapped answer keeps the one it had; an edited
question starts without alternatives."""

from __future__ import annotations

import json

from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from desktop.session import alternatives
from desktop.session.session import SessionStore
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI


async def regenerated_twice(chat: Conversation, fake: FakeOpenAI) -> None:
    fake.add({"content": "First answer."}, {"content": "Second answer."}, {"content": "Third answer."})
    await chat.ask("a name for my cat?")
    for n in (2, 3):
        await chat.send("a name for my cat?", redo=True)  # Regenerate
        assert isinstance(await chat.wait_end(n), TurnFinished)


async def test_regenerating_twice_keeps_three_answers_and_sends_only_the_one_shown(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    await regenerated_twice(chat, fake)
    session = await core.sessions.load(chat.key)
    assert [m["content"] for m in session.messages] == ["a name for my cat?", "Third answer."]
    assert alternatives.of(session) == (2, 3)
    assert "First answer." not in json.dumps(fake.requests[-1]["messages"])  # an alternative is never history
    assert "Second answer." not in json.dumps(fake.requests[-1]["messages"])

    restarted = await SessionStore(core.sessions.directory).load(chat.key)  # the app starts again
    assert alternatives.of(restarted) == (2, 3)
    assert [m["content"] for m in restarted.messages] == ["a name for my cat?", "Third answer."]

    assert await alternatives.choose(core.sessions, session, 0)  # ‹ ‹: the first answer
    assert [m["content"] for m in session.messages] == ["a name for my cat?", "First answer."]
    assert alternatives.of(session) == (0, 3)
    assert not await alternatives.choose(core.sessions, session, 3)  # there is no fourth
    chosen = await SessionStore(core.sessions.directory).load(chat.key)
    assert [m["content"] for m in chosen.messages] == ["a name for my cat?", "First answer."]
    assert alternatives.of(chosen) == (0, 3)

    fake.add({"content": "Then Pepper."})
    await chat.ask("and for a second cat?")
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "First answer." in sent and "Second answer." not in sent and "Third answer." not in sent
    assert alternatives.of(session) is None  # only the last answer flips; the first question keeps its three
    assert len(session_lines(core, chat.key)[0][alternatives.KEY]["0"]["others"]) == 2


async def test_flipping_back_and_forth_keeps_every_answer(chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    await regenerated_twice(chat, fake)
    session = await core.sessions.load(chat.key)
    seen = []
    for index in (1, 0, 2, 1):
        assert await alternatives.choose(core.sessions, session, index)
        seen.append(session.messages[-1]["content"])
    assert seen == ["Second answer.", "First answer.", "Third answer.", "Second answer."]
    assert alternatives.of(session) == (1, 3)


async def test_an_edited_question_starts_without_alternatives(chat: Conversation, core: Core,
                                                              fake: FakeOpenAI) -> None:
    await regenerated_twice(chat, fake)
    fake.add({"content": "A dog: Rex."})
    await chat.send("a name for my dog?", redo=True)  # Edit
    assert isinstance(await chat.wait_end(4), TurnFinished)
    session = await core.sessions.load(chat.key)
    assert alternatives.of(session) is None
    assert [m["content"] for m in session.messages] == ["a name for my dog?", "A dog: Rex."]
    assert alternatives.KEY not in session_lines(core, chat.key)[0]


async def test_a_branch_keeps_the_answer_it_shares_when_the_parent_flips(chat: Conversation, core: Core,
                                                                        fake: FakeOpenAI) -> None:
    await regenerated_twice(chat, fake)
    parent = await core.sessions.load(chat.key)
    branch = await core.sessions.branch(chat.key, 2, "cli:branch")
    assert alternatives.of(branch) is None  # the alternatives stay the parent's
    assert await alternatives.choose(core.sessions, parent, 0)
    again = await SessionStore(core.sessions.directory).load("cli:branch")
    assert [m["content"] for m in again.messages] == ["a name for my cat?", "Third answer."]
    assert [m["content"] for m in branch.messages] == ["a name for my cat?", "Third answer."]

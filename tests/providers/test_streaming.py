"""The model's answer as it streams (desktop/providers/streaming.py): text that can be saved and sent.

A model server may send a character outside the Basic Multilingual Plane as its two JSON escapes in two chunks,
or a lone escape; Python keeps those as lone surrogates, which no UTF-8 file or JSON body can hold. Such an answer
once ended the turn with an error and was lost. Through real turns against the scripted server."""

from __future__ import annotations

from desktop.core import Core
from desktop.kernel.bus import ReasoningDelta, TextDelta, TurnFinished
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI

SPLIT_SMILE = "\ud83d\ude00"  # two code points here, so the scripted server sends each in a chunk of its own


async def test_split_and_stray_escapes_in_an_answer_are_mended_shown_saved_and_the_chat_goes_on(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"reasoning": f"think {SPLIT_SMILE} \udcff", "content": f"smile {SPLIT_SMILE}, stray \udcff, end \ud83d",
              "chunk": 1},
             {"content": "Still here."})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "smile \U0001f600, stray \ufffd, end \ufffd"
    assert "".join(e.text for e in chat.of(TextDelta)) == end.content
    assert "".join(e.text for e in chat.of(ReasoningDelta)) == "think \U0001f600 \ufffd"
    saved = session_lines(core, chat.key)[-1]
    assert saved["content"] == end.content and saved["reasoning_content"] == "think \U0001f600 \ufffd"

    end = await chat.ask("and now?")
    assert isinstance(end, TurnFinished) and end.content == "Still here."
    assert fake.requests[-1]["messages"][-2]["content"] == "smile \U0001f600, stray \ufffd, end \ufffd"


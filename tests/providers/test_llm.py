"""The model call (desktop/providers/llm.py).

A stream that stays open but brings no content is stalled: keep-alives and empty chunks are no progress, so
the call ends after provider.timeout (tried again as usual while nothing reached the user). Content arriving
slowly but steadily is progress, however long the whole answer takes. Through real turns against the
scripted server.

The provider skips the openai client's message transform; that is only right while the transform would
leave messages and tools unchanged. If an openai upgrade makes it change them, the last test fails."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from openai._utils._transform import async_maybe_transform
from openai.types.chat import completion_create_params

from desktop.config import Config
from desktop.core import Core, default_tools
from desktop.kernel.bus import Retrying, TextDelta, TurnError, TurnFinished
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI

TIMEOUT = 2.0  # short, and well inside the whole-answer bound (ten times this) on a busy machine
STALLED = f"kept the stream open but sent nothing for {TIMEOUT:g} s"


@pytest.fixture
def short_timeout(core: Core) -> Core:
    core.config.provider.timeout = TIMEOUT
    core.config.provider.retry_delays = [0.05]
    return core


async def server_saw_the_client_leave(fake: FakeOpenAI) -> None:
    """The stream was closed, not left open: a real server stops generating for nobody."""
    for _ in range(200):
        if fake.streams_open == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{fake.streams_open} stream(s) still open on the server")


@pytest.mark.parametrize("keep_alive", [pytest.param({"empty_chunks": 0.05}, id="empty-chunks"),
                                        pytest.param({"pings": 0.05}, id="sse-comments")])
async def test_a_stream_of_nothing_ends_after_the_timeout_and_is_tried_again(
        chat: Conversation, short_timeout: Core, fake: FakeOpenAI, keep_alive: dict[str, Any]) -> None:
    fake.add(keep_alive, keep_alive)
    end = await chat.ask("hello?")
    assert isinstance(end, TurnError) and STALLED in end.message and end.kind == "answer"
    assert len(fake.requests) == 2 and len(chat.of(Retrying)) == 1  # one retry, as for other transient faults
    await server_saw_the_client_leave(fake)


async def test_a_stalled_stream_then_a_good_one_is_an_answer(chat: Conversation, short_timeout: Core,
                                                             fake: FakeOpenAI) -> None:
    fake.add({"empty_chunks": 0.05}, {"content": "Here I am."})
    end = await chat.ask("hello?")
    assert isinstance(end, TurnFinished) and end.content == "Here I am."


async def test_a_stall_after_text_is_not_tried_again(chat: Conversation, short_timeout: Core,
                                                     fake: FakeOpenAI) -> None:
    fake.add({"content": "The first half of", "empty_chunks": 0.05})
    end = await chat.ask("tell me a story")
    assert isinstance(end, TurnError) and STALLED in end.message
    assert "".join(d.text for d in chat.of(TextDelta)) == "The first half of"
    assert len(fake.requests) == 1  # the user saw text: a second try would repeat it
    await server_saw_the_client_leave(fake)


async def test_slow_but_steady_content_may_take_longer_than_the_timeout(chat: Conversation, short_timeout: Core,
                                                                       fake: FakeOpenAI) -> None:
    # a piece every 0.5 s: each gap well under the timeout, the whole answer (reasoning, a tool call's
    # arguments, then text, over two calls) well over it
    fake.add({"reasoning": "Which file? notes.", "tool_calls": [{"name": "read_file", "arguments": {"path": "n.md"}}],
              "chunk": 6, "pace": 0.5},
             {"content": "The notes file is not there yet.", "chunk": 8, "pace": 0.5})
    end = await chat.ask("what do my notes say?")
    assert isinstance(end, TurnFinished) and end.content == "The notes file is not there yet."
    assert len(fake.requests) == 2 and not chat.of(Retrying)


async def test_openai_transform_is_identity_for_our_messages_and_tools(tmp_path) -> None:
    tools = default_tools(Config(), tmp_path).schemas()
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]},
        {"role": "assistant", "content": None, "reasoning_content": "hmm",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "exec", "content": "out"},
        {"role": "assistant", "content": "done"},
    ]
    body = {"messages": copy.deepcopy(messages), "model": "m", "stream": True, "tools": copy.deepcopy(tools)}
    out = await async_maybe_transform(body, completion_create_params.CompletionCreateParamsStreaming)
    assert out["messages"] == messages and out["tools"] == tools

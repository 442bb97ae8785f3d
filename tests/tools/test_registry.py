"""What every tool's output becomes (desktop/tools/registry.py): text that can be saved and sent.

A sandboxed command can name a file with bytes that are not UTF-8; the OS hands such a name to Python with those
bytes as lone surrogates, which no UTF-8 file or JSON body can hold. Listing it once used to end the turn with an
internal error and keep the chat from being saved or asked again. A `\\udcff` escape in the model's arguments is
the same once parsed. Through real turns."""

from __future__ import annotations

import os

from desktop.core import Core
from desktop.kernel.bus import ToolFinished, ToolStarted, TurnFinished
from tests.conftest import Conversation, session_lines, tool_results
from tests.fakeserver import FakeOpenAI


async def test_a_file_name_that_is_not_utf8_is_listed_mended_and_the_chat_is_saved_and_goes_on(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    workspace = os.fsencode(core.workspace)
    for name in (b"latin1-caf\xe9.txt", b"stray-\xff\xfe.txt", b"half-\xf0\x9f.txt"):
        with open(os.path.join(workspace, name), "wb") as handle:
            handle.write(b"x")
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}},
                             {"name": "glob", "arguments": {"pattern": "*.txt"}}]},
             {"content": "Listed."}, {"content": "Still here."})
    end = await chat.ask("what is in there?")
    assert isinstance(end, TurnFinished) and end.content == "Listed."
    listed, globbed = tool_results(fake.requests[1])
    for shown in (listed, globbed):
        assert "latin1-caf\ufffd.txt" in shown and "stray-\ufffd\ufffd.txt" in shown and "half-\ufffd\ufffd.txt" in shown
    assert all(e.ok and "\ufffd" in e.result for e in chat.of(ToolFinished))
    saved = [m["content"] for m in session_lines(core, chat.key) if m.get("role") == "tool"]
    assert saved == [listed, globbed]

    end = await chat.ask("and now?")
    assert isinstance(end, TurnFinished) and end.content == "Still here."
    assert tool_results(fake.requests[-1]) == [listed, globbed]


async def test_a_stray_escape_in_a_tool_call_s_arguments_is_mended_and_the_tool_runs(
        chat: Conversation, core: Core, fake: FakeOpenAI) -> None:
    fake.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "note.txt", "content": "a \udcff b"}}]},
             {"content": "Written."})
    end = await chat.ask("write it")
    assert isinstance(end, TurnFinished) and end.content == "Written."
    assert (core.workspace / "note.txt").read_text(encoding="utf-8") == "a \ufffd b"
    assert [e.arguments["content"] for e in chat.of(ToolStarted)] == ["a \ufffd b"]

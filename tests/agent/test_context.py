"""The prompt (desktop/agent/context.py): workspace files the app may not read are named, never sent."""

from __future__ import annotations

import json
import os
from pathlib import Path

from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI


async def test_a_prompt_file_that_may_not_be_read_is_named_not_sent(chat: Conversation, core: Core,
                                                                     fake: FakeOpenAI, tmp_path: Path) -> None:
    """USER.md as a link to a file outside the workspace, SOUL.md as a pipe, MEMORY.md too big: the model is
    told each was not read (so it can tell the user), gets none of their contents, and the turn does not hang."""
    secret = tmp_path / "private.txt"
    secret.write_text("PRIVATE-CONTENT")
    ws = core.workspace
    (ws / "USER.md").unlink()
    (ws / "USER.md").symlink_to(secret)
    (ws / "SOUL.md").unlink()
    os.mkfifo(ws / "SOUL.md")
    (ws / "memory" / "MEMORY.md").write_text("x" * (600 * 1024))
    (ws / "AGENTS.md").write_text("# Agents\n\nAlways answer in French.\n")
    fake.add({"content": "ok"})
    assert isinstance(await chat.ask("hello"), TurnFinished)
    system = fake.requests[-1]["messages"][0]["content"]
    assert "Always answer in French." in system  # a plain file is read as ever
    assert "## USER.md\n\n[Not read: USER.md is a link that leads outside" in system
    assert "## SOUL.md\n\n[Not read: SOUL.md is a named pipe" in system
    assert "# Memory\n\n[Not read: memory/MEMORY.md is 600 KB; the app reads files up to 512 KB" in system
    assert "PRIVATE-CONTENT" not in json.dumps(fake.requests) and "xxxxxxxx" not in system

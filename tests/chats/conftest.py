"""A saved chat with every kind of step, written through the real session store."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import pytest

from desktop.session.session import Session, SessionStore

KEY = "desktop:abc123"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def a_chat(media: Path) -> Session:
    media.write_bytes(PNG)
    session = Session(KEY, metadata={"title": "Plans for <b>Friday</b>"})
    session.messages = [
        {"role": "user", "content": "What is on my list? <script>alert('x')</script>", "media": [str(media)]},
        {"role": "assistant", "content": "", "reasoning_content": "The person wants the list; read todo.md.",
         "tool_calls": [{"id": "c1", "type": "function",
                         "function": {"name": "read_file", "arguments": json.dumps({"path": "todo.md"})}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "- buy milk\n- ``` fence\n</details><script>x()</script>"},
        {"role": "assistant", "content": "You have **two** things:\n\n1. buy milk\n2. a <script>bad()</script> tag"},
    ]
    return session


@pytest.fixture
def chat_file(home_dir: Path, tmp_path: Path) -> Session:
    store = SessionStore(home_dir / "data" / "sessions")
    session = a_chat(tmp_path / "photo.png")
    store.directory.mkdir(parents=True, exist_ok=True)
    asyncio.run(store.rewrite(session))
    return session

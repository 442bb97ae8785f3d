"""Background tasks across a crash: the app killed after a task ended but before its chat was told, or while it
ran, leaves its chat saying so at the next start (its transcript alone kept what became of it)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from desktop.conversation.transcript import Kind, rows_from_messages
from desktop.core import build_core
from tests.cli.interrupted import process_env
from tests.fakeserver import FakeOpenAI, Step, last_user_text
from tests.memkeyring import MemoryKeyring
from tests.subagents.test_subagents import answered_tool, is_subagent, running_commands


def killed_once(home: Path, fake: FakeOpenAI, question: str, ready: Any) -> None:
    """`nanobot-tray agent -m QUESTION` killed (SIGKILL, as a crash or a power cut ends it) once `ready()`."""
    command = subprocess.Popen([sys.executable, "-m", "desktop", "agent", "-m", question], env=process_env(home),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 60
        while not ready() and time.monotonic() < end and command.poll() is None:
            time.sleep(0.05)
        assert ready(), f"the app never got there: {command.communicate(timeout=20)[1]!r}"
    finally:
        command.kill()
        command.communicate(timeout=20)


async def chat_rows(key_part: str) -> list[Any]:
    """The one chat whose key holds `key_part`, as the chat window shows it after a start of the app."""
    core = await asyncio.to_thread(build_core)
    await core.start()
    try:
        (key,) = [info.key for info in await core.sessions.list() if key_part in info.key]
        return rows_from_messages((await core.sessions.load(key)).messages)
    finally:
        await core.close()


async def test_a_report_the_app_crashed_before_telling_is_in_its_chat_at_the_next_start(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    """A task finished and the app died while the turn telling its report waited for the model: after the next
    start its chat said only "Background task “Photos” finished", and the result was nowhere to be seen there.
    Now the report follows, as the task wrote it."""
    held = threading.Event()

    def reply(body: dict[str, Any]) -> Step:
        if is_subagent(body):
            return {"content": "Report: 7 photos sorted into 2 folders."}
        if "[Background task" in last_user_text(body):
            return {"content": "Done.", "after": held}
        if answered_tool(body):
            return {"content": "I started that in the background."}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "sort the photos", "label": "Photos"}}]}

    fake.default = reply
    try:
        killed_once(home_dir, fake, "sort my photos",
                    lambda: any("[Background task" in last_user_text(r) for r in fake.requests))
    finally:
        held.set()
    rows = await chat_rows("cli")
    assert any(r.kind is Kind.ASSISTANT and "Report: 7 photos sorted into 2 folders." in r.text for r in rows)


async def test_a_task_the_app_crashed_during_is_said_stopped_in_its_chat_at_the_next_start(
        home_dir: Path, model_config: dict[str, Any], memory_keyring: MemoryKeyring, fake: FakeOpenAI) -> None:
    """The app died while a task ran: its chat kept "I started that in the background" and nothing more, so a
    result was waited for in vain. Now the next start says the task stopped."""
    def reply(body: dict[str, Any]) -> Step:
        if is_subagent(body):
            return {"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 36.25"}}]}
        if answered_tool(body):
            return {"content": "I started that in the background."}
        return {"tool_calls": [{"name": "spawn", "arguments": {"task": "index the music", "label": "Music"}}]}

    fake.default = reply
    killed_once(home_dir, fake, "index my music", lambda: running_commands("sleep 36.25"))
    rows = await chat_rows("cli")
    assert rows[-1].kind is Kind.NOTICE
    assert rows[-1].text == "Background task “Music” stopped: the app closed before it finished"

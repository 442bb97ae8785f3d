"""Shared fixtures: an isolated home, an in-memory keyring, the scripted model server, a running core."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import keyring
import pytest
import yaml

from desktop.core import Core, build_core
from desktop.kernel.bus import Event, InboundMessage, TurnError, TurnFinished
from desktop.kernel.channels import Channel, session_key
from desktop.providers.helper import ask, model_helper
from desktop.providers.model_thread import model_loop
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring

pytest_plugins = ["tests.reaper", "tests.hangs", "tests.security.summary"]
HELPER_LOAD = 120  # seconds the model helper may take to load litellm on a loaded machine


@pytest.fixture(autouse=True)
def _model_helper_ready() -> None:
    """This process's model helper running, its litellm loaded (seconds on a busy machine) before the test, so
    no test's own timeout pays for it; every test's calls share it (tests/reaper.py lets it outlive a test), and
    it is started again here when it closed itself after idling. Waited for on the model thread's loop: this
    thread's event loop, if a test set one, is left alone."""
    if not model_helper().running:
        asyncio.run_coroutine_threadsafe(warm_model_helper(), model_loop()).result(HELPER_LOAD)


async def warm_model_helper() -> None:
    """The helper started, with its library loaded (a table lookup waits for the load)."""
    await ask("key_needs", model="openai/gpt-4o-mini")


@pytest.fixture(autouse=True)
def collect_on_the_main_thread() -> Iterator[None]:
    """Once Qt is loaded in this process, do as the app's GuiThreadCollector does: automatic collection off,
    each test's garbage collected here, on the GUI thread. Python's collector otherwise runs in whatever
    thread allocates past a threshold (a model call's, an executor's), and Qt objects it frees there leave
    dangling timers: a segfault some tests later, in a pytest-xdist worker even in a test that never used Qt."""
    if "PySide6.QtCore" not in sys.modules:
        yield
        return
    gc.disable()
    yield
    gc.collect()


@pytest.fixture
def home_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "home"
    monkeypatch.setenv("NANOBOT_TRAY_HOME", str(root))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))  # keep the machine's ~/.agents/skills out of tests
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    return root


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port where nothing listens, for the test's whole length: it stays bound (not listening, so
    a connection is refused), which keeps any other server from taking it meanwhile."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def write_config(home_dir: Path, **settings: Any) -> None:
    home_dir.mkdir(parents=True, exist_ok=True)
    (home_dir / "config.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")


@pytest.fixture
def model_config(home_dir: Path, fake: FakeOpenAI) -> dict[str, Any]:
    """config.yaml pointing at the scripted server, with fast retries."""
    settings: dict[str, Any] = {"model": "openai/test", "api_base": fake.base_url,
                                "provider": {"timeout": 10, "retry_delays": [0.05, 0.05, 0.05]}}
    write_config(home_dir, **settings)
    return settings


@pytest.fixture
async def core(model_config: dict[str, Any], memory_keyring: MemoryKeyring) -> AsyncIterator[Core]:
    built = build_core()
    await built.start()
    yield built
    await built.close()


class Conversation:
    """Sends messages into a core and collects everything it publishes."""

    def __init__(self, core: Core, channel: Channel = Channel.CLI, chat_id: str = "test") -> None:
        self.core = core
        self.channel, self.chat_id = channel, chat_id
        self.events: list[Event] = []
        self._arrived = asyncio.Event()
        core.bus.subscribe(self._on_event)

    def _on_event(self, event: Event) -> None:
        self.events.append(event)
        self._arrived.set()

    @property
    def key(self) -> str:
        return session_key(self.channel, self.chat_id)

    async def send(self, text: str, **kw: Any) -> None:
        await self.core.bus.publish_inbound(InboundMessage(self.key, text, **kw))

    async def wait_end(self, count: int = 1, timeout: float = 60) -> TurnFinished | TurnError:
        async def ended() -> TurnFinished | TurnError:
            while True:
                self._arrived.clear()
                ends = [e for e in self.events if isinstance(e, (TurnFinished, TurnError))
                        and e.session_key == self.key]
                if len(ends) >= count:
                    return ends[count - 1]
                await self._arrived.wait()

        return await asyncio.wait_for(ended(), timeout)

    async def first(self, kind: type, timeout: float = 60) -> Any:
        """The first event of this kind in this chat, waited for at most `timeout` seconds."""
        async def arrived() -> Any:
            while True:
                self._arrived.clear()
                found = [e for e in self.events if isinstance(e, kind) and getattr(e, "session_key", self.key) == self.key]
                if found:
                    return found[0]
                await self._arrived.wait()

        return await asyncio.wait_for(arrived(), timeout)

    async def ask(self, text: str, media: list[str] | None = None, timeout: float = 60) -> TurnFinished | TurnError:
        """The app's own way to ask (AgentLoop.ask); the events stay collected for assertions."""
        return await asyncio.wait_for(self.core.loop.ask(self.key, text, media=media), timeout)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def chat(core: Core) -> Conversation:
    return Conversation(core)


def session_lines(core: Core, key: str) -> list[dict]:
    """The chat's file as saved: its metadata line, then one message a line."""
    path = core.sessions.path_for(key)
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_results(request: dict) -> list[str]:
    """The tool results a request to the model carried, in order."""
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]

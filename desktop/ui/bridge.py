"""The conversation door: what the chat, the quick prompt and Settings ask of the core (send, stop, the chats,
the settings writer, the questions the core asks) and the bus's events as one Qt signal. A feature's own
windows talk to the feature's service instead (desktop/ui/host.py).

The qasync loop runs on the GUI thread, so bus subscribers are called there and can emit directly."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop.config import Config
from desktop.conversation.state import Conversations
from desktop.core import Core
from desktop.kernel.bus import ChatDeleted, Event, InboundMessage
from desktop.kernel.questions import Questions
from desktop.kernel.taskset import TaskSet
from desktop.session import alternatives
from desktop.session.chat_model import choose_model
from desktop.session.pins import set_pinned
from desktop.session.search import ChatHit, search_chats
from desktop.session.session import Session, SessionInfo
from desktop.settings import Settings, check
from desktop.subagents import Subagents
from desktop.workspace.layout import ensure_workspace


class CoreBridge(QObject):
    """Windows subscribe to `event` and call `send`; none of them touch the bus directly."""

    event = Signal(object)  # type: ignore[assignment]  # any desktop.kernel.bus event (QObject.event is a method)

    def __init__(self, core: Core, parent: QObject | None = None, questions: Questions | None = None,
                 conversations: Conversations | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self.questions = questions or Questions()  # the questions the core asks (the app passes the core's)
        # what every chat is doing: each event is reduced into it before `event` carries it to the windows
        self.conversations = conversations if conversations is not None else Conversations(core.loop.busy_sessions)
        self._unsubscribe = core.bus.subscribe(self._heard)
        self._pending = TaskSet("the bridge")

    def send(self, session_key: str, text: str, media: list[str] | None = None, *, redo: bool = False,
             names: dict[str, str] | None = None) -> None:
        """Queue a message for the agent (`session_key`: `channel:chat_id`; `redo` and `names` as InboundMessage)."""
        message = InboundMessage(session_key, text, list(media or []), redo=redo, names=dict(names or {}))
        self._pending.spawn(self.core.bus.publish_inbound(message))

    def _heard(self, event: Event) -> None:
        self.conversations.on_event(event)
        self.event.emit(event)

    def stop(self, session_key: str) -> None:
        """Stop the chat's turn, what waits in it and its background tasks (in order with what was sent)."""
        self._pending.spawn(self.core.loop.stop(session_key))

    # ----- chats (sessions)
    def session_title(self, session_key: str) -> str:
        """The chat's title as the sidebar shows it (its key until a title is known)."""
        return self.core.sessions.title_of(session_key)

    async def list_chats(self) -> list[SessionInfo]:
        """Every saved chat, most recently active first (read from disk, off the GUI thread)."""
        return await self.core.sessions.list()

    async def load_chat(self, key: str, *, branch_of: str = "", upto: int = 0) -> Session:
        """The chat `key`; with `branch_of`, made first as a new chat sharing that chat's first `upto` messages
        (Branch from here, Edit on an earlier question: desktop/session/branches.py)."""
        if branch_of:
            return await self.core.sessions.branch(branch_of, upto, key)
        return await self.core.sessions.load(key)

    async def update_chat(self, key: str, *, title: str | None = None, model: str | None = None,
                          pinned: bool | None = None, answer: int | None = None) -> None:
        """Rename a chat, keep a model as its own (desktop/session/chat_model.py), pin it (session/pins.py), or
        show answer `answer` of its last question's regenerated ones (session/alternatives.py). Raises OSError
        when its file cannot be written; the chat keeps what it had."""
        session = await self.core.sessions.load(key)
        if answer is not None and not self.conversations.busy(key):  # a running turn is writing that answer
            await alternatives.choose(self.core.sessions, session, answer)
        if model is not None:
            await choose_model(self.core.sessions, session, model)
        if pinned is not None:
            await set_pinned(self.core.sessions, session, pinned)
        if title is not None:
            before, session.metadata["title"] = session.metadata.get("title"), title
            try:
                await self.core.sessions.rewrite(session, active=False)  # a new name is no use: it keeps its place
            except OSError:
                session.metadata["title"] = before  # as its file still has it
                raise

    async def delete_chat(self, key: str) -> None:
        """Delete a chat the person asked to delete; its background tasks stop with it."""
        self.core.get(Subagents).cancel_chat(key)
        await self.core.sessions.delete(key)
        self.core.publish(ChatDeleted(key))

    def commands(self) -> list[tuple[str, str]]:
        """The slash commands, (name, summary), read fresh: features add theirs."""
        return [(c.name, c.summary) for c in self.core.loop.commands.all()]

    async def search_chats(self, query: str) -> list[ChatHit]:
        """Saved chats whose title or messages contain `query` (all recent chats for ""), read off the GUI thread;
        cancelling the call stops the scan."""
        return await search_chats(self.core.sessions.directory, query)

    # ----- settings (all through the one writer, desktop/settings.py)
    @property
    def settings(self) -> Settings:
        """The one settings writer: `config` in force, `read()` the file as it is now, `subscribe(keys,
        listener)`, `update(edit)`; features' pages change their own sections through it."""
        return self.core.settings

    async def save_settings(self, config: Config, *, keep_broken_copy: bool = False) -> Path | None:
        """Make the workspace folder, then write config.yaml and put it in force; returns a kept copy of a
        broken file. Raises OSError when either cannot be written, SettingsError for a value out of range
        (checked first: a refused workspace, such as the home folder, gets no templates)."""
        await asyncio.to_thread(check, config)
        await asyncio.to_thread(ensure_workspace, self.core.home.workspace(config.workspace))
        return await self.core.settings.save(config, keep_broken_copy=keep_broken_copy)

    @property
    def workspace(self) -> Path:
        return self.core.workspace

    @property
    def default_workspace(self) -> Path:
        return self.core.home.default_workspace

    def close(self) -> None:
        self._unsubscribe()

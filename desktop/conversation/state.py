"""One state per chat, reduced from the bus's events once, for everyone who shows a chat: whether its turn runs
(and what started it), the answer streamed so far, the turn's tool calls (one waiting for the person's answer
included; `asking` names the chats waiting for an answer), why its last turn failed; and the background tasks
of every chat, whose questions belong to the chat that started them (`owner`). The tray, the notification
policy and the windows read it instead of each keeping its own count of running turns.

Qt-free: the app feeds it every event before any window hears the event, so a window reacting to an event
reads a state that already includes it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from desktop.kernel.bus import (
    Event,
    MessageKind,
    TextDelta,
    ToolAwaiting,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
    TurnStarted,
)
from desktop.kernel.channels import Channel, channel_of

if TYPE_CHECKING:
    from desktop.subagents.events import TaskSnapshot


@dataclass
class ToolCall:
    """One tool call of the running turn."""

    name: str
    label: str
    awaiting: bool = False  # its approval question waits for the person
    ok: bool | None = None  # None while it runs


@dataclass
class Conversation:
    key: str
    busy: bool = False
    turn_kind: MessageKind | None = None  # what started the running turn (None while idle, or its start unseen)
    ended_kind: MessageKind | None = None  # what started the turn that ended last (None: its start was unseen)
    text: str = ""  # the answer streamed so far in the running turn
    tools: dict[str, ToolCall] = field(default_factory=dict)  # the running turn's tool calls, by call id
    error: str | None = None  # why the last turn failed, until a turn ends well

    @property
    def awaiting(self) -> bool:
        """A tool call waits for the person's answer."""
        return any(call.awaiting for call in self.tools.values())


class Conversations:
    """Every chat's state, by session key, and every chat's background tasks."""

    def __init__(self, busy: Iterable[str] = ()) -> None:
        """`busy`: the chats whose turn runs already (their starts were not seen)."""
        self._chats: dict[str, Conversation] = {}
        self.running: list[str] = []  # the chats whose turn runs, first started first
        self.last_error: str | None = None  # why the last turn of any chat failed, until one ends well
        self.background: list[TaskSnapshot] = []  # every chat's background tasks as last reported
        for key in busy:
            self.chat(key).busy = True
            self.running.append(key)

    def chat(self, key: str) -> Conversation:
        if key not in self._chats:
            self._chats[key] = Conversation(key)
        return self._chats[key]

    def busy(self, key: str) -> bool:
        return key in self._chats and self._chats[key].busy

    @property
    def background_running(self) -> list[TaskSnapshot]:
        return [t for t in self.background if t.status == "running"]

    def task_of(self, key: str) -> TaskSnapshot | None:
        """The background task whose own work runs under session `key` ("subagent:<id>"), if it is one."""
        if channel_of(key) is not Channel.SUBAGENT:
            return None
        task_id = key.partition(":")[2]
        return next((t for t in self.background if t.id == task_id), None)

    def owner(self, key: str) -> str:
        """The chat a session's questions belong in: a background task's is the chat that started it."""
        task = self.task_of(key)
        return task.origin if task is not None else key

    def asking(self) -> list[str]:
        """The chats where a question waits for the person's answer (a background task's, in its chat)."""
        owners = [self.owner(key) for key, chat in self._chats.items() if chat.awaiting]
        return list(dict.fromkeys(owners))

    def on_event(self, event: Event) -> None:
        # Imported here, not above: the subagents package brings much of the agent core (0.1 s), and this state
        # is built before the tray icon shows. Events come from the core, which has loaded it by then.
        from desktop.subagents.events import BackgroundTasks

        if isinstance(event, BackgroundTasks):
            self.background = list(event.tasks)
            return
        key = getattr(event, "session_key", None)
        if not isinstance(key, str):
            return
        chat = self.chat(key)
        if isinstance(event, TurnStarted):
            chat.busy, chat.turn_kind, chat.text, chat.tools = True, event.kind, "", {}
            if key not in self.running:
                self.running.append(key)
        elif isinstance(event, (TurnFinished, TurnError)):
            self._ended(chat, event)
        elif isinstance(event, TextDelta):
            chat.text += event.text
        elif isinstance(event, ToolStarted):
            chat.tools[event.call_id] = ToolCall(event.name, event.label or event.name)
        elif isinstance(event, ToolAwaiting) and event.call_id in chat.tools:
            chat.tools[event.call_id].awaiting = event.awaiting
        elif isinstance(event, ToolFinished) and event.call_id in chat.tools:
            call = chat.tools[event.call_id]
            call.ok, call.awaiting = event.ok, False

    def _ended(self, chat: Conversation, event: TurnFinished | TurnError) -> None:
        chat.busy, chat.ended_kind, chat.turn_kind = False, chat.turn_kind, None
        if chat.key in self.running:
            self.running.remove(chat.key)
        failed = event.message if isinstance(event, TurnError) else None
        chat.error = self.last_error = failed


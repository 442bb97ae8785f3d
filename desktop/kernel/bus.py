"""The message bus and the turn contract: inbound messages in; out, to every subscriber, the events of a turn
(started, streamed, tools, finished or failed) and a few about chats.

Every event derives from `Event`. A feature's own events live with the feature (`desktop/subagents/events.py`,
`desktop/mcp/events.py`) and ride the same bus, so this module changes when the turn does, not when a
feature arrives."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Event:
    """What the bus carries out: each kind is a dataclass deriving from this, matched by `isinstance`."""


class MessageKind(enum.Enum):
    """Who a message to the agent comes from: the model is told, and the chat shows it accordingly."""

    USER = "user"  # typed by the person
    SCHEDULED = "scheduled"  # a reminder or scheduled job came due
    SUBAGENT_RESULT = "subagent_result"  # a background task finished


@dataclass
class InboundMessage:
    session_key: str  # "channel:chat_id" (desktop/kernel/channels.py)
    content: str
    media: list[str] = field(default_factory=list)  # file paths (images go to the model as images)
    kind: MessageKind = MessageKind.USER
    # Resolved with the turn's end (TurnFinished or TurnError) by the loop: what `AgentLoop.ask` awaits.
    reply: asyncio.Future[TurnFinished | TurnError] | None = field(default=None, repr=False, compare=False)
    redo: bool = False  # Retry, Regenerate or Edit: it replaces the chat's last turn instead of adding one
    # The names files of `media` were first sent by, where their paths now name the workspace copies (a Retry, an
    # Edit of a message read from its chat's file): the message and the model keep calling them so.
    names: dict[str, str] = field(default_factory=dict)
    # The slash command it is ("/new"), parsed once when the loop takes it; a stop is one from the start.
    command: str | None = None
    # What the app calls a chat its message begins ("Reminder: stretch"; desktop/session/titles.py).
    title: str = ""


class OutboundKind(enum.Enum):
    MESSAGE = "message"  # sent by the `message` tool in the middle of a turn
    COMMAND = "command"  # a slash command's reply while a turn runs (/status), or "nothing to stop"
    REMINDER = "reminder"  # a reminder's own text, delivered when the assistant could not be reached for it
    NOTICE = "notice"  # a quiet line the app leaves in a chat (what an undo put back), saved there as its message


@dataclass
class OutboundMessage(Event):
    """A message for the user that is not a turn's answer (the answer rides on TurnFinished, once)."""

    session_key: str
    content: str
    kind: OutboundKind


@dataclass
class TextDelta(Event):
    session_key: str
    text: str


@dataclass
class ReasoningDelta(Event):
    session_key: str
    text: str


@dataclass
class ToolStarted(Event):
    session_key: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    label: str = ""  # how the chat names the call when not by `name` (an MCP tool: "server · tool")
    summary: str = ""  # the call in a few words, when its tool says it better than any one argument


@dataclass
class ToolProgress(Event):
    """The last lines a running tool (exec) has printed so far, for the chat to show while it runs."""

    session_key: str
    call_id: str
    tail: str


@dataclass
class ToolAwaiting(Event):
    """A tool call waits for the person's yes or no (an approval question) before it runs, or no longer."""

    session_key: str
    call_id: str
    awaiting: bool


@dataclass
class ToolFinished(Event):
    session_key: str
    call_id: str
    name: str
    result: str
    ok: bool
    seconds: float | None  # how long it ran, from when it was let through (not a question's wait); None: never ran


@dataclass
class TurnStarted(Event):
    session_key: str
    kind: MessageKind = MessageKind.USER  # what started it: a scheduled turn's feature notifies for itself
    message: str = ""  # the message it answers: for one the app sent, its first line is the chat's divider
    redo: bool = False  # it replaces the chat's last turn (InboundMessage.redo): a window showing the chat does too


@dataclass
class MessageTakenIn(Event):
    """A message sent into a chat while its turn ran was taken into that turn (after its step's tools), which
    answers it too: no turn starts for it, so a window showing the chat learns of it here. `message` is the message
    as the chat keeps it (desktop.agent.attachments.question), saved just before this."""

    session_key: str
    message: dict[str, Any]


@dataclass
class TurnFinished(Event):
    """The turn ended: `content` is the final answer (partial when `stopped`), or a queued command's reply."""

    session_key: str
    content: str
    stopped: bool = False


@dataclass
class ChatSetAside(Event):
    """/new moved the chat's conversation to a key of its own (still listed and openable); `session_key` is
    empty now."""

    session_key: str


@dataclass
class ChatDeleted(Event):
    """The person deleted the chat `session_key` (its file is gone): what a feature keeps for it can go."""

    session_key: str


@dataclass
class Retrying(Event):
    """A model call failed and is tried again after `seconds`: try `attempt` of `attempts`."""

    session_key: str
    attempt: int
    attempts: int
    seconds: float


@dataclass
class TurnProgress(Event):
    """What a running turn waits for or went on without, in a few words ("Waiting for MCP servers: time…")."""

    session_key: str
    text: str


@dataclass
class TurnError(Event):
    """The turn failed (e.g. the provider after retries). `kind` is a FailureKind value: what can help."""

    session_key: str
    message: str
    kind: str = "other"


Subscriber = Callable[[Event], None]


class Ask(Protocol):
    """`AgentLoop.ask` as features hold it: submit a message to a session and await its turn's end."""

    async def __call__(self, session_key: str, text: str, *, kind: MessageKind = ...,
                       title: str = ...) -> TurnFinished | TurnError: ...


Publish = Callable[[Event], None]  # where a part that produces events sends them (the bus, or a test's list)


class MessageBus:
    """Inbound is a queue the agent loop drains; outbound fans out to subscribers synchronously."""

    def __init__(self) -> None:
        self.inbound: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._subscribers: list[Subscriber] = []

    async def publish_inbound(self, message: InboundMessage) -> None:
        await self.inbound.put(message)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def publish(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception:  # one broken view must not break the agent
                log.exception("event subscriber failed on %s", type(event).__name__)

"""The message bus: inbound user/system messages in, outbound replies and progress events out."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger(__name__)


class MessageKind(enum.Enum):
    """Who a message to the agent comes from: the model is told, and the chat shows it accordingly."""

    USER = "user"  # typed by the person
    NOTICE = "notice"  # the app telling the agent something
    SCHEDULED = "scheduled"  # a reminder or scheduled job came due
    SUBAGENT_RESULT = "subagent_result"  # a background task finished


@dataclass
class InboundMessage:
    channel: str  # "desktop", "quick", "cli", "system"
    chat_id: str
    content: str
    media: list[str] = field(default_factory=list)  # file paths (images go to the model as images)
    kind: MessageKind = MessageKind.USER
    # Resolved with the turn's end (TurnFinished or TurnError) by the loop: what `AgentLoop.ask` awaits.
    reply: asyncio.Future[TurnFinished | TurnError] | None = field(default=None, repr=False, compare=False)
    redo: bool = False  # Retry, Regenerate or Edit: it replaces the chat's last turn instead of adding one

    @property
    def session_key(self) -> str:
        return f"{self.channel}:{self.chat_id}"


class OutboundKind(enum.Enum):
    MESSAGE = "message"  # sent by the `message` tool in the middle of a turn
    COMMAND = "command"  # a slash command's reply while a turn runs (/status), or "nothing to stop"


@dataclass
class OutboundMessage:
    """A message for the user that is not a turn's answer (the answer rides on TurnFinished, once)."""

    session_key: str
    content: str
    kind: OutboundKind


@dataclass
class TextDelta:
    session_key: str
    text: str


@dataclass
class ReasoningDelta:
    session_key: str
    text: str


@dataclass
class ToolStarted:
    session_key: str
    call_id: str
    name: str
    arguments: dict[str, Any]
    label: str = ""  # how the chat names the call when not by `name` (an MCP tool: "server · tool")


@dataclass
class ToolProgress:
    """The last lines a running tool (exec) has printed so far, for the chat to show while it runs."""

    session_key: str
    call_id: str
    tail: str


@dataclass
class ToolAwaiting:
    """A tool call waits for the person's yes or no (an approval question) before it runs, or no longer."""

    session_key: str
    call_id: str
    awaiting: bool


@dataclass
class ToolFinished:
    session_key: str
    call_id: str
    name: str
    result: str
    ok: bool
    seconds: float


@dataclass
class TurnStarted:
    session_key: str
    kind: MessageKind = MessageKind.USER  # what started it: a scheduled turn's feature notifies for itself


@dataclass
class TurnFinished:
    """The turn ended: `content` is the final answer (partial when `stopped`), or a queued command's reply."""

    session_key: str
    content: str
    stopped: bool = False


@dataclass
class ChatSetAside:
    """/new moved the chat's conversation to `kept_as` (still listed and openable); `session_key` is empty now."""

    session_key: str
    kept_as: str


@dataclass
class Retrying:
    """A model call failed and is tried again after `seconds`: try `attempt` of `attempts`."""

    session_key: str
    attempt: int
    attempts: int
    seconds: float


@dataclass
class TurnProgress:
    """What a running turn waits for or went on without, in a few words ("Waiting for MCP servers: time…")."""

    session_key: str
    text: str


@dataclass
class TurnError:
    """The turn failed (e.g. the provider after retries). `kind` is a FailureKind value: what can help."""

    session_key: str
    message: str
    kind: str = "other"


TASK_ACTIVE = ("queued", "running")  # a background task in these states has not ended


@dataclass(frozen=True)
class TaskSnapshot:
    """One background task (subagent) as it was when published: views keep it while the task moves on."""

    id: str
    origin: str  # the session key of the chat that started it
    label: str
    status: str  # queued, running, done, failed, cancelled
    started: float  # time.time() when it was asked for
    step: str = ""  # what it does now while running, e.g. "exec: pytest -q"
    result: str = ""  # its report, or why it failed or stopped, once it has ended
    finished: float | None = None

    @property
    def active(self) -> bool:
        return self.status in TASK_ACTIVE


@dataclass
class BackgroundTasks:
    """Every chat's running, queued and recent background tasks: published whenever one starts, ends or moves
    to another step, so the tray and the chat window need not ask."""

    tasks: list[TaskSnapshot]

    @property
    def running(self) -> list[TaskSnapshot]:
        return [t for t in self.tasks if t.status == "running"]


@dataclass
class McpServerChanged:
    """An MCP server started connecting, connected, failed, stopped or refreshed its tools (Settings shows it)."""

    name: str
    state: str  # connecting, connected, failed or stopped


Event = (OutboundMessage | TextDelta | ReasoningDelta | ToolStarted | ToolFinished | TurnStarted
         | TurnFinished | TurnError | ChatSetAside | Retrying | ToolProgress | ToolAwaiting | BackgroundTasks
         | McpServerChanged | TurnProgress)
Subscriber = Callable[[Event], None]


class Ask(Protocol):
    """`AgentLoop.ask` as features hold it: submit a message to a session and await its turn's end."""

    async def __call__(self, session_key: str, text: str, *,
                       kind: MessageKind = ...) -> TurnFinished | TurnError: ...


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

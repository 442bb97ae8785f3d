"""The message bus: inbound user/system messages in, outbound replies and progress events out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass
class InboundMessage:
    channel: str  # "desktop", "quick", "cli", "system"
    chat_id: str
    content: str
    media: list[str] = field(default_factory=list)  # file paths (images go to the model as images)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def session_key(self) -> str:
        return self.metadata.get("session_key") or f"{self.channel}:{self.chat_id}"


@dataclass
class OutboundMessage:
    """A message for the user: a turn's final answer, or one sent by the `message` tool."""

    session_key: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)


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


@dataclass
class TurnFinished:
    """The turn ended: `content` is the final answer (partial when `stopped`)."""

    session_key: str
    content: str
    stopped: bool = False


@dataclass
class TurnError:
    """The turn failed (e.g. the provider after retries); shown to the user, never persisted."""

    session_key: str
    message: str


Event = (OutboundMessage | TextDelta | ReasoningDelta | ToolStarted | ToolFinished | TurnStarted
         | TurnFinished | TurnError)
Subscriber = Callable[[Event], None]


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

"""Tell the user something from a background feature (subagent done, reminder due, Dream ran, approval needed).

Qt-free so the core can call it; the desktop app installs the real sink (desktop notifications that
honour Do not disturb). Without a sink (CLI, tests) notifications go to the log."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from desktop.session.session import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenChat:
    """Clicking opens this chat, scrolled to `message` when given: the index, in the chat's saved session, of the
    message the notification is about (an answer); None opens the chat as it was left."""

    session_key: str
    message: int | None = None


@dataclass(frozen=True)
class OpenMemoryChange:
    """Clicking opens the memory viewer on this change (a Dream commit)."""

    rev: str


Target = OpenChat | OpenMemoryChange


@dataclass(frozen=True)
class Notification:
    title: str
    body: str  # plain text: daemons and tray balloons show markup literally
    target: Target | None = None  # what clicking it opens; None: nothing in particular
    # Buttons besides the click, as (key, label), where the notification service shows them (an approval's
    # Allow / Deny); `on_action(key)` hears which was pressed. Without them a click still opens `target`.
    actions: tuple[tuple[str, str], ...] = ()
    on_action: Callable[[str], None] | None = field(default=None, compare=False)
    # For a note that can go stale (an approval answered in the chat): the sink hands it a function that takes
    # the notification off the screen, to call once it no longer applies.
    withdraw_when: Callable[[Callable[[], None]], None] | None = field(default=None, compare=False)


Sink = Callable[[Notification], None]
_sink: Sink | None = None


def chat(session_key: str, message: int | None = None) -> OpenChat:
    return OpenChat(session_key, message)


def newest_message(session: Session) -> OpenChat:
    """The chat opened at its newest saved message: the answer a notification is about has just been saved."""
    return OpenChat(session.key, len(session.messages) - 1 if session.messages else None)


def memory_change(rev: str) -> OpenMemoryChange:
    return OpenMemoryChange(rev)


def install(sink: Sink | None) -> None:
    """Route notifications to `sink`; None restores logging."""
    global _sink
    _sink = sink


def notify(title: str, body: str, target: Target | None = None, actions: tuple[tuple[str, str], ...] = (),
           on_action: Callable[[str], None] | None = None,
           withdraw_when: Callable[[Callable[[], None]], None] | None = None) -> None:
    """Show a notification whose click opens `target` (`chat(key)` or `memory_change(rev)`), with `actions`
    as buttons where the service has them, taken back through `withdraw_when` (see Notification)."""
    note = Notification(title, body, target, actions, on_action, withdraw_when)
    if _sink is None:
        log.info("notification: %s — %s", title, body)
        return
    _sink(note)

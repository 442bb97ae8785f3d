"""Telling the person something: a feature that ends a turn or a job publishes one `Notice` on the bus
(`Host.notify`), and whoever shows notices decides how — the app as a desktop notification (Do not disturb,
grouping, what a click opens), the command line in its log. One route for every feature; none of them
knows how notices are shown.

`plain_text` is here too because notices are plain text: daemons and tray balloons show markup literally."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from desktop.kernel.bus import Event

if TYPE_CHECKING:
    from desktop.session.session import Session

PREVIEW_CHARS = 200


@dataclass(frozen=True)
class OpenChat:
    """Clicking opens this chat, scrolled to `message` when given: the index, in the chat's saved session, of the
    message the notice is about (an answer); None opens the chat as it was left."""

    session_key: str
    message: int | None = None


@dataclass(frozen=True)
class OpenMemoryChange:
    """Clicking opens the memory viewer on this change (a Dream commit)."""

    rev: str


Target = OpenChat | OpenMemoryChange


@dataclass(frozen=True)
class Notice(Event):
    title: str
    body: str  # plain text (`plain_text` makes it from Markdown)
    target: Target | None = None  # what clicking it opens; None: nothing in particular
    # Buttons besides the click, as (key, label), where the notification service shows them (an approval's
    # Allow / Deny); `on_action(key)` hears which was pressed. Without them a click still opens `target`.
    actions: tuple[tuple[str, str], ...] = ()
    on_action: Callable[[str], None] | None = field(default=None, compare=False)
    # For a notice that can go stale (an approval answered in the chat): whoever shows it hands this a function
    # that takes it off the screen, to call once it no longer applies.
    withdraw_when: Callable[[Callable[[], None]], None] | None = field(default=None, compare=False)


class Notify(Protocol):
    """`Host.notify` as features hold it: publish one notice."""

    def __call__(self, title: str, body: str, target: Target | None = None) -> None: ...


def at_newest(session: Session) -> OpenChat:
    """The chat opened at its newest saved message: the answer a notice is about has just been saved."""
    return OpenChat(session.key, len(session.messages) - 1 if session.messages else None)


_MARKUP = [
    (re.compile(r"```[^\n]*\n?"), ""),  # code fence lines
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images → their alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links → their text
    (re.compile(r"^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+", re.MULTILINE), ""),  # headings, quotes, list markers
    (re.compile(r"(\*\*|__|~~|`)"), ""),  # emphasis and inline code marks
    (re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+)(?<!\s)\*(?![\w*])"), r"\1"),  # *italic*
]


def plain_text(markdown: str, limit: int = PREVIEW_CHARS) -> str:
    """A one-paragraph plain-text preview of a Markdown answer."""
    text = markdown
    for pattern, replacement in _MARKUP:
        text = pattern.sub(replacement, text)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"

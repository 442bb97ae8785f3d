"""Tell the user something from a background feature (subagent done, reminder due, Dream ran, approval needed).

Qt-free so the core can call it; the desktop app installs the real sink (desktop notifications that
honour Do not disturb). Without a sink (CLI, tests) notifications go to the log."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)

Sink = Callable[[str, str, "str | None"], None]
_sink: Sink | None = None
MEMORY_CHANGE = "memory-change:"  # an action target that opens the memory viewer on a commit


def memory_change(rev: str) -> str:
    """The action target for a notification about a Dream commit."""
    return f"{MEMORY_CHANGE}{rev}"


def install(sink: Sink | None) -> None:
    """Route notifications to `sink(title, body, action_session)`; None restores logging."""
    global _sink
    _sink = sink


def notify(title: str, body: str, action_session: str | None = None) -> None:
    """Show a notification; `action_session` is what its "Open" action opens: a chat ("channel:chat_id")
    or a `memory_change(rev)`."""
    if _sink is None:
        log.info("notification: %s — %s", title, body)
        return
    _sink(title, body, action_session)

"""When the agent's own events become notifications, and what they say.

Background features (subagents, reminders, heartbeat, approvals) publish their own notices
(desktop/kernel/notices.py); this module decides for ordinary turns: a reply that finished or failed while
its chat was not on screen.
Qt-free: the shell supplies "is this chat on screen", "what is this chat called" and "where is its newest saved
message" (the answer just saved, which a click on the notification opens the chat at)."""

from __future__ import annotations

from collections.abc import Callable

from desktop.kernel.bus import Event, MessageKind, TurnError, TurnFinished, TurnStarted
from desktop.kernel.notices import Notice, OpenChat, plain_text


class TurnNotifications:
    """Remembers which turns started, and turns their ends into notifications when nobody saw them."""

    def __init__(self, on_screen: Callable[[str], bool], title_of: Callable[[str], str],
                 newest_message: Callable[[str], int | None]) -> None:
        self._on_screen = on_screen
        self._title_of = title_of
        self._newest_message = newest_message
        self._running: set[str] = set()

    def on_event(self, event: Event) -> Notice | None:
        if isinstance(event, TurnStarted):
            if event.kind is not MessageKind.SCHEDULED:  # reminders and the heartbeat notify for themselves
                self._running.add(event.session_key)
            return None
        if not isinstance(event, (TurnFinished, TurnError)) or event.session_key not in self._running:
            return None
        key = event.session_key
        self._running.discard(key)
        if self._on_screen(key):
            return None
        title = self._title_of(key)
        target = OpenChat(key, self._newest_message(key))  # the answer, or the failure, saved as the turn ended
        if isinstance(event, TurnError):
            return Notice(f"{title}: reply failed", plain_text(event.message), target)
        if event.stopped:
            return None
        return Notice(title, plain_text(event.content) or "(empty reply)", target)

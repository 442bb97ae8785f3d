"""When the agent's own events become notifications, and what they say.

Background features (subagents, reminders, heartbeat, approvals) publish their own notices
(desktop/kernel/notices.py); this module decides for ordinary turns: a reply that finished or failed while
its chat was not on screen.
Qt-free: the shell supplies the chats' state (desktop/conversation/state.py), "is this chat on screen", "what
is this chat called" and "where is its newest saved message" (the answer just saved, which a click on the
notification opens the chat at)."""

from __future__ import annotations

from collections.abc import Callable

from desktop.conversation.state import Conversations
from desktop.kernel.bus import Event, MessageKind, TurnError, TurnFinished
from desktop.kernel.notices import Notice, OpenChat, plain_text


class TurnNotifications:
    """Turns the ends of turns a person started into notifications when nobody saw them; what started each turn
    comes from the chats' state (reduced from the same events just before)."""

    def __init__(self, conversations: Conversations, on_screen: Callable[[str], bool],
                 title_of: Callable[[str], str], newest_message: Callable[[str], int | None]) -> None:
        self._conversations = conversations
        self._on_screen = on_screen
        self._title_of = title_of
        self._newest_message = newest_message

    def on_event(self, event: Event) -> Notice | None:
        if not isinstance(event, (TurnFinished, TurnError)):
            return None
        key = event.session_key
        # unseen starts stay quiet, and reminders and the heartbeat notify for themselves
        if self._conversations.chat(key).ended_kind in (None, MessageKind.SCHEDULED) or self._on_screen(key):
            return None
        title = self._title_of(key)
        target = OpenChat(key, self._newest_message(key))  # the answer, or the failure, saved as the turn ended
        if isinstance(event, TurnError):
            return Notice(f"{title}: reply failed", plain_text(event.message), target)
        if event.stopped:
            return None
        return Notice(title, plain_text(event.content) or "(empty reply)", target)

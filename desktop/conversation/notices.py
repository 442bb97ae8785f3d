"""Which ends of turns the person should hear about, and what the notice says: a reply that finished or failed
in a turn the person started, while that chat was not in front of them.

Background features (subagents, reminders, heartbeat) publish their own notices (desktop/kernel/notices.py); this
decides for ordinary turns. Qt-free: the app's notifications slice (desktop/ui/notifications) supplies "is this
chat in front of the person" and "what is it called", and points the notice at the answer once it is saved."""

from __future__ import annotations

from collections.abc import Callable

from desktop.conversation.state import Conversations
from desktop.kernel.bus import Event, MessageKind, TurnError, TurnFinished
from desktop.kernel.notices import Notice, OpenChat, plain_text


class TurnNotifications:
    """Turns the ends of turns a person started into notices when nobody saw them; what started each turn comes
    from the chats' state (reduced from the same events just before)."""

    def __init__(self, conversations: Conversations, in_front: Callable[[str], bool],
                 title_of: Callable[[str], str]) -> None:
        self._conversations = conversations
        self._in_front = in_front
        self._title_of = title_of

    def on_event(self, event: Event) -> Notice | None:
        """The notice for a turn's end, opening its chat; None when there is nothing to tell."""
        if not isinstance(event, (TurnFinished, TurnError)):
            return None
        key = event.session_key
        # unseen starts stay quiet, and reminders and the heartbeat notify for themselves
        if self._conversations.chat(key).ended_kind in (None, MessageKind.SCHEDULED) or self._in_front(key):
            return None
        title = self._title_of(key)
        if isinstance(event, TurnError):
            return Notice(f"{title}: reply failed", plain_text(event.message), OpenChat(key))
        if event.stopped:
            return None
        return Notice(title, plain_text(event.content) or "(empty reply)", OpenChat(key))

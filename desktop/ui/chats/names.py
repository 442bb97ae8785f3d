"""Chats by name in the windows that list things by the chat they belong to (Reminders: each job's chat; Usage: the
chats and jobs that used most), never by key: keys mean nothing to a person. The titles are the chat list's,
read off the GUI thread when such a window opens; a chat open somewhere is named by its live title."""

from __future__ import annotations

from desktop.ui.bridge import CoreBridge

UNTITLED = "Untitled chat"  # saved before anything titled it (by a version that left a reminder's chat untitled)
DELETED = "Deleted chat"  # no longer saved: a reminder's run or a counted call outlives its chat


def chat_words(key: str, title: str | None) -> str:
    """A chat as a person knows it: `title` is its title as the chat list reads it (which is the key itself for a
    chat without one), None when no chat is saved under `key`."""
    if title is None:
        return DELETED
    return title if title and title != key else UNTITLED


class ChatNames:
    """The saved chats' titles, read once per `read`; `words` names a chat from them."""

    def __init__(self, bridge: CoreBridge) -> None:
        self._bridge = bridge
        self._titles: dict[str, str] | None = None  # every saved chat's title, by key, once read

    async def read(self) -> None:
        """Read every saved chat's title again (from disk, off the GUI thread)."""
        self._titles = {info.key: info.title for info in await self._bridge.list_chats()}

    def words(self, key: str) -> str:
        """Nothing until the chats are read (a blink); then a chat open somewhere by its title now (named or
        renamed since the reading), else as the reading found it."""
        if self._titles is None:
            return ""
        loaded = self._bridge.session_title(key)
        return loaded if loaded != key else chat_words(key, self._titles.get(key))

"""Where a chat comes from: the channel, the part of every session key before its colon ("desktop:1a2b3c4d").

Policy follows the channel, read here and nowhere else: a chat a person typed in (the window, the quick
prompt, a terminal) is in the foreground; a background task's own session and the app's jobs are not, so
Do not disturb keeps them from asking. Keys stay plain strings because they name the chats' files."""

from __future__ import annotations

import enum


class Channel(enum.StrEnum):
    DESKTOP = "desktop"  # the chat window
    QUICK = "quick"  # the quick prompt
    CLI = "cli"  # `nanobot-tray agent` at a terminal
    SUBAGENT = "subagent"  # a background task's own work
    SYSTEM = "system"  # the app's own jobs (the heartbeat, Dream)

    @property
    def foreground(self) -> bool:
        """A chat a person typed in, not background work."""
        return self in (Channel.DESKTOP, Channel.QUICK, Channel.CLI)


def session_key(channel: Channel, chat_id: str) -> str:
    return f"{channel}:{chat_id}"


def channel_of(key: str) -> Channel | None:
    """The chat's channel; None for a key no part of the app makes (a chat file put there by hand)."""
    try:
        return Channel(key.partition(":")[0])
    except ValueError:
        return None

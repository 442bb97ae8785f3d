"""What a chat is called until the person renames it: its first message names it, once.

A chat the person began is called by their first words. One the app began (a reminder came due in a chat nobody
had typed in, or in one /new emptied since it was set) is called by the name its message came with ("Reminder:
stretch"), so the chat list, the window and the notifications never show a chat by its key. A title once given
stays: the person's first words in a chat a reminder named do not rename it under them (the notification they
just saw named it so); they rename it themselves in the chat list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.kernel.bus import InboundMessage, MessageKind

LONGEST = 60  # characters of a title taken from a message; longer ends in "…"


def entitle(metadata: dict[str, Any], msg: InboundMessage) -> bool:
    """Give a chat without a title the one its message `msg` gives it (in `metadata`); True when it did, so the
    caller saves it."""
    if metadata.get("title"):
        return False
    if msg.kind is MessageKind.USER:
        words = msg.content or " ".join(Path(m).name for m in msg.media)
    else:  # unnamed, it is called as the chat shows it: by its first line, without the brackets
        words = msg.title or _first_line(msg.content).strip("[] ")
    line = _first_line(words) or "New chat"
    metadata["title"] = line[:LONGEST] + ("…" if len(line) > LONGEST else "")
    return True


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0].strip() if text.strip() else ""

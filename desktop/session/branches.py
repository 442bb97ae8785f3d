"""What a branch of a chat is on disk: a chat whose file holds only its own messages and, in its metadata line,
the chat it branched from (`branch_of`) and how many of that chat's messages it shares (`shared`). The shared
part is read from the parent's file, so it is stored once; SessionStore (desktop/session/session.py) writes it
into the branch ("materialises" it) before the parent's copy of it could go: the parent deleted, or its shared
messages rewritten (a Retry there). Plain functions on metadata and messages, so they need no store to test."""

from __future__ import annotations

from typing import Any

from desktop.session.alternatives import KEY as ALTERNATIVES

BRANCH_OF = "branch_of"  # the parent chat's key
SHARED = "shared"  # how many of the parent's messages, from its first, are this chat's history too
SHARED_SHOWN = "shared_shown"  # how many of those the person sees as messages (the chat list's count)
LINK_KEYS = (BRANCH_OF, SHARED, SHARED_SHOWN)
_NOT_INHERITED = ("title", "pinned", "created_at", "updated_at", ALTERNATIVES, *LINK_KEYS)


def parent_of(metadata: dict[str, Any]) -> str:
    """The key of the chat this one shares its start with; "" when it stands alone."""
    parent = metadata.get(BRANCH_OF)
    return parent if isinstance(parent, str) else ""


def shared_count(metadata: dict[str, Any]) -> int:
    """How many messages at the start are read from the parent (0 for a chat that stands alone)."""
    shared = metadata.get(SHARED)
    return shared if parent_of(metadata) and isinstance(shared, int) and shared > 0 else 0


def unlink(metadata: dict[str, Any]) -> None:
    """The chat now holds its whole history itself."""
    for key in LINK_KEYS:
        metadata.pop(key, None)


def branch_end(messages: list[dict[str, Any]], upto: int) -> int:
    """How many messages a branch "up to and including message `upto - 1`" shares: a step's tool results go
    with the call that asked for them, so a branch never starts with a call left unanswered."""
    end = max(0, min(upto, len(messages)))
    while 0 < end < len(messages) and messages[end].get("role") == "tool":
        end += 1
    return end


def branch_metadata(parent_key: str, parent: dict[str, Any], shared: int, shown: int) -> dict[str, Any]:
    """A new branch's metadata: the parent's settings (its model), its title, and the link. Memory archived
    past the shared part is the parent's, so the branch counts as archived only what they both had."""
    metadata = {k: v for k, v in parent.items() if k not in _NOT_INHERITED}
    metadata["title"] = parent.get("title") or parent_key
    metadata["last_consolidated"] = min(int(parent.get("last_consolidated", 0)), shared)
    metadata.update({BRANCH_OF: parent_key, SHARED: shared, SHARED_SHOWN: shown})
    return metadata

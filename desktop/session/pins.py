"""Pinned chats: kept at the top of the chat list, above the date groups. The pin is kept on the chat's metadata
line, so it survives a restart; pinning is no activity, so the chat keeps its place in time."""

from __future__ import annotations

import asyncio

from desktop.session.session import Session, SessionStore

KEY = "pinned"


async def set_pinned(store: SessionStore, session: Session, pinned: bool) -> None:
    """Pin or unpin the chat. A chat not yet saved gets the pin with its first message. Raises OSError when the
    chat's file cannot be written; the chat stays as it was."""
    before = session.metadata.get(KEY)
    if pinned:
        session.metadata[KEY] = True
    else:
        session.metadata.pop(KEY, None)
    try:
        if await asyncio.to_thread(store.path_for(session.key).exists):
            await store.rewrite(session, active=False)
    except OSError:
        if before is None:
            session.metadata.pop(KEY, None)
        else:
            session.metadata[KEY] = before
        raise

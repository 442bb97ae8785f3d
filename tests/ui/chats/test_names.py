"""Chats named in the windows that list things by the chat they belong to (desktop/ui/chats/names.py): by the
title the chat list shows, read from the chats' files, never by key."""

from __future__ import annotations

from desktop.session.session import SessionStore
from desktop.ui.bridge import CoreBridge
from desktop.ui.chats.names import ChatNames


async def saved_by_an_earlier_run(bridge: CoreBridge) -> None:
    """Two chats an earlier run of the app saved, neither loaded now: "Trip plans", and one a reminder ran in
    before anything gave it a title."""
    earlier = SessionStore(bridge.core.sessions.directory)
    trip = await earlier.load("desktop:trip")
    trip.metadata["title"] = "Trip plans"
    await earlier.append(trip, {"role": "user", "content": "Plan a trip"})
    bare = await earlier.load("desktop:bare")
    await earlier.append(bare, {"role": "user", "content": "Stretch", "kind": "scheduled"})


async def test_chats_not_loaded_are_named_by_their_saved_titles_and_a_deleted_one_in_words(
        bridge: CoreBridge) -> None:
    await saved_by_an_earlier_run(bridge)
    names = ChatNames(bridge)
    assert names.words("desktop:trip") == ""  # nothing shown until the titles are read (off the GUI thread)
    await names.read()
    assert bridge.session_title("desktop:trip") == "desktop:trip"  # not loaded: only its file knows its title
    assert [names.words(key) for key in ("desktop:trip", "desktop:bare", "quick:gone")] == [
        "Trip plans", "Untitled chat", "Deleted chat"]

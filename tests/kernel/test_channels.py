"""The channel of a session key decides whether it is a chat a person typed in or background work."""

from __future__ import annotations

from desktop.kernel.channels import Channel, channel_of, session_key
from desktop.kernel.questions import background_key


def test_chats_people_type_in_are_foreground_and_the_rest_background() -> None:
    for channel in (Channel.DESKTOP, Channel.QUICK, Channel.CLI):
        key = session_key(channel, "1a2b")
        assert channel_of(key) is channel and not background_key(key)
    for channel in (Channel.SUBAGENT, Channel.SYSTEM):
        assert background_key(session_key(channel, "heartbeat"))


def test_a_key_no_part_of_the_app_makes_counts_as_background() -> None:
    assert channel_of("handmade") is None and background_key("handmade")
    assert channel_of("quickly:x") is None

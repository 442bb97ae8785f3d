"""Notifications for the ends of turns: a reply that finished or failed in a chat the person started while it
was not in front of them is announced (the policy: desktop/conversation/notices.py), and a click opens that chat
at the answer. Every notice goes out through `host.notify`, which decides how it is shown (Do not disturb,
grouping, what a click opens)."""

from __future__ import annotations

from dataclasses import replace

from desktop.kernel.bus import Event
from desktop.kernel.notices import Notice, OpenChat, at_newest
from desktop.kernel.taskset import TaskSet
from desktop.ui.host import UiFeature, UiHost


def attach_ui(host: UiHost) -> None:
    def ready() -> None:
        from desktop.conversation.notices import TurnNotifications

        bridge = host.bridge
        policy = TurnNotifications(bridge.conversations, host.in_front, bridge.session_title)
        pending = TaskSet("turn notifications")

        async def at_answer(note: Notice) -> None:
            """Point the notice at the answer just saved (the chat is loaded: no disk read)."""
            assert isinstance(note.target, OpenChat)
            host.notify(replace(note, target=at_newest(await bridge.load_chat(note.target.session_key))))

        def heard(event: Event) -> None:
            note = policy.on_event(event)
            if note is not None:
                pending.spawn(at_answer(note))

        bridge.event.connect(heard)

    host.on_ready(ready)


UI_FEATURE = UiFeature("notifications", attach_ui)

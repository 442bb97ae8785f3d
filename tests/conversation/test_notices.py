"""Which turn endings become notifications, and that what they say is plain text a daemon shows as is."""

from __future__ import annotations

from desktop.conversation.notices import TurnNotifications
from desktop.conversation.state import Conversations
from desktop.kernel.bus import Event, MessageKind, TurnError, TurnFinished, TurnStarted
from desktop.kernel.notices import Notice, OpenChat, plain_text


class Policy:
    """The policy as the app runs it: each event reduced into the chats' state first."""

    def __init__(self, on_screen: set[str]) -> None:
        self.state = Conversations()
        self.notes = TurnNotifications(self.state, lambda key: key in on_screen,
                                       lambda key: {"desktop:a": "Trip plans"}.get(key, key))

    def on_event(self, event: Event) -> Notice | None:
        self.state.on_event(event)
        return self.notes.on_event(event)


def policy(on_screen: set[str]) -> Policy:
    return Policy(on_screen)


def test_an_answer_nobody_saw_is_announced_under_the_chat_title() -> None:
    notes = policy(set())
    assert notes.on_event(TurnStarted("desktop:a")) is None
    note = notes.on_event(TurnFinished("desktop:a", "## Done\n\nBooked **two** seats, see [the list](http://x)."))
    assert note == Notice("Trip plans", "Done Booked two seats, see the list.", OpenChat("desktop:a"))


def test_on_screen_stopped_or_unstarted_turns_stay_quiet() -> None:
    notes = policy({"desktop:seen"})
    notes.on_event(TurnStarted("desktop:seen"))
    assert notes.on_event(TurnFinished("desktop:seen", "visible")) is None
    notes.on_event(TurnStarted("desktop:a"))
    assert notes.on_event(TurnFinished("desktop:a", "partial", stopped=True)) is None
    assert notes.on_event(TurnFinished("desktop:a", "a command reply, no turn started")) is None


def test_a_failure_says_so_in_the_title() -> None:
    notes = policy(set())
    notes.on_event(TurnStarted("desktop:b"))
    note = notes.on_event(TurnError("desktop:b", "Can't reach the model server"))
    assert note is not None and note.title == "desktop:b: reply failed" and note.target == OpenChat("desktop:b")


def test_plain_text_strips_markdown_and_keeps_it_short() -> None:
    assert plain_text("```python\nprint(1)\n```") == "print(1)"
    assert plain_text("> quoted\n- item *one*\n1. `two`") == "quoted item one two"
    assert plain_text("x " * 300).endswith("…") and len(plain_text("x " * 300)) == 200
    assert plain_text("2 * 3 * 4 = 24") == "2 * 3 * 4 = 24"


def test_scheduled_turns_are_left_to_the_feature_that_started_them() -> None:
    notes = policy(set())
    notes.on_event(TurnStarted("desktop:a", MessageKind.SCHEDULED))  # a reminder or the heartbeat notifies itself
    assert notes.on_event(TurnFinished("desktop:a", "HEARTBEAT_OK")) is None

"""The per-chat state reduced from a turn's events, as the tray, the notification policy and the windows read it."""

from __future__ import annotations

from desktop.conversation.state import Conversations
from desktop.kernel.bus import (
    MessageKind,
    TextDelta,
    ToolAwaiting,
    ToolFinished,
    ToolStarted,
    TurnError,
    TurnFinished,
    TurnStarted,
)
from desktop.subagents.events import BackgroundTasks, TaskSnapshot


def test_a_turn_runs_streams_calls_a_tool_that_waits_for_the_person_and_ends() -> None:
    state = Conversations()
    state.on_event(TurnStarted("desktop:a"))
    chat = state.chat("desktop:a")
    assert state.busy("desktop:a") and state.running == ["desktop:a"] and chat.turn_kind is MessageKind.USER
    state.on_event(ToolStarted("desktop:a", "c1", "exec", {"command": "ls"}))
    state.on_event(ToolAwaiting("desktop:a", "c1", True))
    assert chat.awaiting and chat.tools["c1"].label == "exec"
    state.on_event(ToolFinished("desktop:a", "c1", "exec", "a b", True, 0.1))
    assert not chat.awaiting and chat.tools["c1"].ok
    state.on_event(TextDelta("desktop:a", "Two "))
    state.on_event(TextDelta("desktop:a", "files."))
    assert chat.text == "Two files."
    state.on_event(TurnFinished("desktop:a", "Two files."))
    assert not state.busy("desktop:a") and state.running == [] and chat.ended_kind is MessageKind.USER
    state.on_event(TurnStarted("desktop:a"))
    assert chat.text == "" and chat.tools == {}  # a new turn starts clean


def test_a_failure_is_remembered_until_a_turn_ends_well() -> None:
    state = Conversations()
    state.on_event(TurnStarted("desktop:a", MessageKind.SCHEDULED))
    state.on_event(TurnStarted("desktop:b"))
    assert state.running == ["desktop:a", "desktop:b"]
    state.on_event(TurnError("desktop:a", "The model server is unreachable"))
    assert state.chat("desktop:a").error == state.last_error == "The model server is unreachable"
    assert state.chat("desktop:a").ended_kind is MessageKind.SCHEDULED and state.running == ["desktop:b"]
    state.on_event(TurnFinished("desktop:b", "Fine."))
    assert state.last_error is None and state.chat("desktop:a").error == "The model server is unreachable"


def test_an_end_whose_start_was_not_seen_says_so() -> None:
    """A turn running when the app started listening: it is busy, and its end names no kind (nobody asked)."""
    state = Conversations(busy=["desktop:old"])
    assert state.busy("desktop:old") and state.running == ["desktop:old"]
    state.on_event(TurnFinished("desktop:old", "Done."))
    assert not state.busy("desktop:old") and state.chat("desktop:old").ended_kind is None
    state.on_event(TurnFinished("desktop:old", "Again?"))
    assert state.chat("desktop:old").ended_kind is None


def test_background_tasks_are_every_chats_as_last_reported() -> None:
    state = Conversations()
    state.on_event(BackgroundTasks([TaskSnapshot("t1", "desktop:a", "Build", "running", started=0.0),
                                    TaskSnapshot("t2", "desktop:b", "Look", "done", started=0.0)]))
    assert [t.label for t in state.background_running] == ["Build"] and len(state.background) == 2
    state.on_event(BackgroundTasks([]))
    assert state.background_running == []

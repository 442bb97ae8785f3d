"""Model faults in the chat window, against the scripted server: a stream cut off mid-answer, one that never
ends, an empty answer. Each ends in an error box with Retry; what was streamed before the fault does not stay
on screen as an answer, so the chat looks the same live as after a reload."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.model import Kind, rows_from_messages
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI
from tests.ui.chat.test_window import TURN, click, kinds, model_of, saved_messages, type_and_send
from tests.ui.conftest import until

CUT = {"content": "Once upon a time there was a fox", "chunk": 5, "cut": 4}  # the role, then three pieces


def shown(window: ChatWindow) -> list[tuple[Kind, str]]:
    return [(r.kind, r.text) for r in model_of(window).rows]


def reloaded(bridge: CoreBridge) -> list[tuple[Kind, str]]:
    return [(r.kind, r.text) for r in rows_from_messages(saved_messages(bridge, "desktop:test"))]


@pytest.mark.parametrize(("steps", "reason"), [
    pytest.param([CUT], "The answer broke off", id="cut-off"),
    pytest.param([{"content": ""}] * 4, "finished without an answer", id="empty"),  # every attempt
    pytest.param([{"content": "and again ", "endless": 0.2}], "kept streaming", id="endless"),
])
async def test_a_faulty_answer_is_an_error_with_retry_live_as_after_a_reload(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot,  # type: ignore[no-untyped-def]
        steps: list[dict[str, Any]], reason: str) -> None:
    bridge.core.config.provider.timeout = 1.0  # an endless stream is cut at ten times this
    fake.add(*steps)
    type_and_send(qtbot, window, "tell me a story")
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    assert reason in model_of(window).rows[-1].text
    assert kinds(window) == [Kind.USER, Kind.ERROR]  # nothing streamed before the fault reads as an answer
    assert shown(window) == reloaded(bridge)
    window.view.viewport().repaint()
    assert window.view.control_rect(1, "retry") is not None

    fake.add({"content": "The fox slept."})
    click(qtbot, window, 1, "retry")
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model_of(window).busy, timeout=TURN)
    assert shown(window) == [(Kind.USER, "tell me a story"), (Kind.ASSISTANT, "The fox slept.")]
    assert shown(window) == reloaded(bridge)


async def test_the_partial_text_is_on_screen_while_it_streams_and_goes_with_the_fault(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Once upon a time there was a fox", "chunk": 5, "hang": 1.0, "cut": 4})
    type_and_send(qtbot, window, "tell me a story")
    await until(lambda: Kind.ASSISTANT in kinds(window), timeout=TURN)
    assert model_of(window).rows[-1].text.startswith("Once")  # the reader sees it arrive
    model_of(window).flush()
    window.grab().save("/tmp/fault-streaming.png")
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    assert kinds(window) == [Kind.USER, Kind.ERROR]
    window.grab().save("/tmp/fault-cut-off.png")

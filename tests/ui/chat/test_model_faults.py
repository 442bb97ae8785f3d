"""Model faults in the chat window, against the scripted server: a stream cut off mid-answer, a server that
dies mid-answer, one that never ends, an empty answer. Each ends in an error box with Retry; what was streamed
before the fault stays, marked cut off (never as a whole answer), and the chat looks the same live as after a
reload."""

from __future__ import annotations

import json
from typing import Any

import pytest

from desktop.conversation.transcript import CUT_OFF, Kind, rows_from_messages
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI
from tests.ui.chat.test_window import TURN, click, kinds, model_of, saved_messages, type_and_send
from tests.ui.conftest import until

CUT = {"content": "Once upon a time there was a fox", "chunk": 5, "cut": 4}  # the role, then three pieces
SHOWN = "Once upon a tim"  # those three pieces of five characters


def shown(window: ChatWindow) -> list[tuple[Kind, str, bool]]:
    return [(r.kind, r.text, r.cut_off) for r in model_of(window).rows]


def reloaded(bridge: CoreBridge) -> list[tuple[Kind, str, bool]]:
    return [(r.kind, r.text, r.cut_off) for r in rows_from_messages(saved_messages(bridge, "desktop:test"))]


@pytest.mark.parametrize(("steps", "reason", "kept"), [
    pytest.param([CUT], "The answer broke off", SHOWN, id="cut-off"),
    pytest.param([{**CUT, "reset": True}], "The answer broke off", SHOWN, id="server-died"),
    pytest.param([{"content": ""}] * 4, "finished without an answer", "", id="empty"),  # every attempt
    pytest.param([{"content": "and again ", "endless": 0.2}], "kept streaming", "and agaiand agai", id="endless"),
])
async def test_a_faulty_answer_is_an_error_with_retry_live_as_after_a_reload(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot,  # type: ignore[no-untyped-def]
        steps: list[dict[str, Any]], reason: str, kept: str) -> None:
    bridge.core.config.provider.timeout = 1.0  # an endless stream is cut at ten times this
    fake.add(*steps)
    type_and_send(qtbot, window, "tell me a story")
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    assert reason in model_of(window).rows[-1].text
    if kept:  # what was read stays, marked as not whole
        assert kinds(window) == [Kind.USER, Kind.ASSISTANT, Kind.ERROR]
        partial = model_of(window).rows[1]
        assert partial.text.startswith(kept) and partial.cut_off and not partial.streaming
        assert any(getattr(op, "text", "") == CUT_OFF for op in window.view.row_layout(1).ops)
    else:
        assert kinds(window) == [Kind.USER, Kind.ERROR]
    assert shown(window) == reloaded(bridge)
    assert "Once" not in json.dumps(fake.requests[-1]["messages"])  # never sent to the model as an answer
    window.view.viewport().repaint()
    error = len(kinds(window)) - 1
    assert window.view.control_rect(error, "retry") is not None

    fake.add({"content": "The fox slept."})
    click(qtbot, window, error, "retry")
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model_of(window).busy, timeout=TURN)
    assert shown(window) == [(Kind.USER, "tell me a story", False), (Kind.ASSISTANT, "The fox slept.", False)]
    assert shown(window) == reloaded(bridge)


async def test_the_partial_text_is_on_screen_while_it_streams_and_stays_cut_off_after_the_fault(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Once upon a time there was a fox", "chunk": 5, "hang": 1.0, "cut": 4, "reset": True})
    type_and_send(qtbot, window, "tell me a story")
    await until(lambda: Kind.ASSISTANT in kinds(window), timeout=TURN)
    assert model_of(window).rows[-1].text.startswith("Once")  # the reader sees it arrive
    await until(lambda: Kind.ERROR in kinds(window), timeout=TURN)
    assert kinds(window) == [Kind.USER, Kind.ASSISTANT, Kind.ERROR]
    assert model_of(window).rows[1].text == SHOWN and model_of(window).rows[1].cut_off

    fake.add({"content": "A new question, a whole answer."})
    type_and_send(qtbot, window, "something else")  # not Retry: the cut-off answer stays in the chat
    await until(lambda: kinds(window)[-1] is Kind.ASSISTANT and not model_of(window).busy, timeout=TURN)
    assert [r[2] for r in shown(window)] == [False, True, False, False, False]
    assert shown(window)[:2] == reloaded(bridge)[:2] and reloaded(bridge)[2][0] is Kind.NOTICE

"""Usage in the chat window, on a running core and the scripted server: hovering an answer shows what its model
calls used (prompt, cached and completion tokens, cost), the header what the whole chat has used, both the same
after a restart; and with prices, as a priced model's calls are written in the log."""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QMouseEvent, QPainter
from PySide6.QtWidgets import QApplication, QToolTip

from desktop.conversation.transcript import Kind
from desktop.core import build_core
from desktop.kernel.work import Source
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.usage.chat import ChatUsagePanel
from desktop.usage import Usage
from desktop.usage.records import CallRecord
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until
from tests.usage.test_counting import counts

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the header and a hovered answer look like
KEY = "desktop:test"
FILES = "Your workspace holds the usual files."
FIRST_TIP = "This answer: 2 model calls\n2,550 prompt tokens (2,200 cached)\n52 completion tokens\nno price: local model"


def chat_window(bridge: CoreBridge, qtbot: Any, key: str = KEY) -> ChatWindow:
    """The chat window as the app builds it with the usage strip, open on chat `key`."""
    made = ChatWindow(bridge, [lambda: ChatUsagePanel(bridge.core.get(Usage), bridge)])
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session(key)
    return made


@pytest.fixture
async def window(bridge: CoreBridge, qtbot) -> AsyncIterator[ChatWindow]:  # type: ignore[no-untyped-def]
    made = chat_window(bridge, qtbot)
    await until(lambda: made.models[KEY].loaded)
    yield made


def strip(window: ChatWindow) -> ChatUsagePanel:
    found = window.findChild(ChatUsagePanel)
    assert found is not None
    return found


def answer_index(window: ChatWindow, text: str) -> int:
    return next(i for i, r in enumerate(window.view.model().rows) if r.kind is Kind.ASSISTANT and r.text == text)


async def hover(window: ChatWindow, index: int) -> str:
    """Rest the pointer on row `index`, as the window system tells it, and read the tooltip that shows ("" for
    none)."""
    QToolTip.hideText()  # the last one goes after a moment
    await until(lambda: not QToolTip.isVisible(), message="the last tooltip to go")
    view = window.view
    view.reveal(index)
    view.viewport().repaint()
    point = view.row_rect(index).center()
    QApplication.sendEvent(view.viewport(), QMouseEvent(
        QEvent.Type.MouseMove, point, view.viewport().mapToGlobal(point), Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier))
    target = view.viewport().childAt(point.toPoint()) or view.viewport()  # over text: the text selector
    local = target.mapFrom(view.viewport(), point.toPoint())
    QApplication.sendEvent(target, QHelpEvent(QEvent.Type.ToolTip, local, target.mapToGlobal(local)))
    return QToolTip.text() if QToolTip.isVisible() else ""


async def ask(window: ChatWindow, text: str, answer: str) -> None:
    window.send(text, [])
    await until(lambda: not window.models[window.current_key].busy
                and any(r.text == answer for r in window.view.model().rows), timeout=60, message="the answer")


async def test_each_answer_and_the_header_show_what_the_model_calls_used(window: ChatWindow,
                                                                         fake: FakeOpenAI) -> None:
    header = strip(window).label
    assert not header.isVisible()  # a new chat has used nothing
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1200, 40, 1000)},
             {"content": FILES, "usage": counts(1350, 12, 1200)},
             {"content": "Nothing else.", "usage": counts(3000, 100)})
    await ask(window, "what is in my workspace?", FILES)
    await until(lambda: header.text() == "2.6k tokens", message="the chat's total in its header")
    assert header.isVisible() and header.parentWidget() is window.title.parentWidget()
    assert await hover(window, answer_index(window, FILES)) == FIRST_TIP

    await ask(window, "anything else?", "Nothing else.")
    await until(lambda: header.text() == "5.7k tokens", message="the header after the second turn")
    assert header.toolTip() == ("This chat: 3 model calls\n5,550 prompt tokens (2,200 cached)\n152 completion tokens\n"
                                "no price: local model")
    assert await hover(window, answer_index(window, "Nothing else.")) == (
        "This answer: 1 model call\n3,000 prompt tokens (0 cached)\n100 completion tokens\nno price: local model")
    assert await hover(window, answer_index(window, FILES)) == FIRST_TIP  # the first answer kept its own
    question = next(i for i, r in enumerate(window.view.model().rows) if r.kind is Kind.USER)
    assert not (await hover(window, question)).startswith("This")  # only answers tell what they used


async def test_after_a_restart_the_answers_and_the_header_show_the_same(
        model_config: dict[str, Any], memory_keyring: object, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1200, 40, 1000)},
             {"content": FILES, "usage": counts(1350, 12, 1200)})
    shown = []
    for _run in range(2):  # the app, then the app started again
        core = build_core()
        await core.start()
        bridge = CoreBridge(core)
        window = chat_window(bridge, qtbot)
        header = strip(window).label
        try:
            await until(lambda w=window: w.models[KEY].loaded)
            if not shown:
                await ask(window, "what is in my workspace?", FILES)
            await until(lambda h=header: h.text() == "2.6k tokens", message="the chat's total in its header")
            assert all(r.message >= 0 for r in window.view.model().rows) == bool(shown)  # read from the file
            shown.append((header.text(), header.toolTip(), await hover(window, answer_index(window, FILES))))
        finally:
            window.close()
            bridge.close()
            await core.close()
    assert shown[0] == shown[1] and shown[1][2] == FIRST_TIP


async def test_a_priced_chat_shows_its_cost_and_what_each_answer_cost(window: ChatWindow,
                                                                      bridge: CoreBridge) -> None:
    sessions = bridge.core.sessions
    trip = await sessions.load("desktop:trip")
    trip.metadata["title"] = "Trip plans"
    for role, text in (("user", "Plan a weekend in Lyon"), ("assistant", "Here is a plan for Lyon."),
                       ("user", "And the trains?"), ("assistant", "Take the TGV from Paris.")):
        await sessions.append(trip, {"role": role, "content": text})
    now = time.time()
    model = "openai/gpt-4o"
    calls = [CallRecord(now - 3600, Source.CHAT, "desktop:trip", model, 90000, 900, 0, 0.5, question=0),  # an
             # earlier conversation of this key, set aside by /new before this one was created
             CallRecord(now, Source.CHAT, "desktop:trip", model, 4000, 150, 1000, 0.0007, question=0),
             CallRecord(now + 0.1, Source.CHAT, "desktop:trip", model, 4200, 50, 4000, 0.0005, question=0),
             CallRecord(now + 0.2, Source.CHAT, "desktop:other", model, 5000, 50, 0, 0.02, question=0),
             CallRecord(now + 0.3, Source.CHAT, "desktop:trip", model, 3000, 100, 0, 0.0288, question=2),
             CallRecord(now + 0.4, Source.SUBAGENT, "desktop:trip", model, 700, 100, 0, 0.01)]
    log = bridge.core.get(Usage).log
    log.path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in calls))

    window.show_session("desktop:trip")
    await until(lambda: window.models["desktop:trip"].loaded, message="the chat's messages shown")
    header = strip(window).label
    await until(lambda: header.text() == "12.3k tokens · $0.04", message="the chat's total and cost")
    assert header.toolTip() == ("This chat: 4 model calls\n11,900 prompt tokens (5,000 cached)\n400 completion "
                                "tokens\n$0.0400\nchat 11,500 · subagent 800")
    plan = answer_index(window, "Here is a plan for Lyon.")
    assert await hover(window, plan) == ("This answer: 2 model calls\n8,200 prompt tokens (5,000 cached)\n"
                                   "200 completion tokens\n$0.0012")
    assert await hover(window, answer_index(window, "Take the TGV from Paris.")) == (
        "This answer: 1 model call\n3,000 prompt tokens (0 cached)\n100 completion tokens\n$0.0288")
    if SHOTS:
        header.parentWidget().grab().save(os.path.join(SHOTS, "chat-usage-header.png"))
        await hover(window, plan)
        _grab_with_tooltip(window).save(os.path.join(SHOTS, "chat-usage-answer-tooltip.png"))


def _grab_with_tooltip(window: ChatWindow) -> Any:
    """The transcript with the tooltip shown over it drawn where it is (it is a window of its own)."""
    view = window.view
    shot = view.grab()
    tip = next(w for w in QApplication.topLevelWidgets() if w.isVisible() and w.inherits("QTipLabel"))
    painter = QPainter(shot)
    painter.drawPixmap(view.mapFromGlobal(tip.mapToGlobal(QPoint(0, 0))), tip.grab())
    painter.end()
    return shot

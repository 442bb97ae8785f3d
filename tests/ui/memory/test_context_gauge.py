"""The context gauge in the chat header, through the real chat window on a running core and the scripted server:
it shows how much of the window the chat shown uses, grows after a turn that read a file, names what fills it
when hovered, follows the chat shown, and says plainly what happens when the chat is nearly full."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from desktop.memory import Memory
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.memory.context_gauge import ContextGaugePanel
from desktop.ui.usage.chat import ChatUsagePanel
from desktop.usage import Usage
from desktop.usage.report import tokens_text
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import open_chat, until

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the header looks like, plain and nearly full
KEY, OTHER = "desktop:gauge", "desktop:other"
PARTS = ("System prompt: ", "Skills: ", "Memory: ", "History: ", "Tool results: ", "Tool descriptions: ")


@pytest.fixture
async def window(bridge: CoreBridge, qtbot: Any) -> AsyncIterator[ChatWindow]:
    """The chat window as the app builds it with the gauge and the usage total beside it, open on chat KEY."""
    yield await open_chat(bridge, qtbot, KEY, [lambda: ContextGaugePanel(bridge.core.get(Memory), bridge),
                                               lambda: ChatUsagePanel(bridge.core.get(Usage), bridge)])


def gauge(window: ChatWindow) -> ContextGaugePanel:
    found = window.findChild(ContextGaugePanel)
    assert found is not None
    return found


async def hover(widget: Any) -> str:
    """Rest the pointer on `widget`, as the window system tells it, and read the tooltip that shows."""
    QToolTip.hideText()
    await until(lambda: not QToolTip.isVisible(), message="the last tooltip to go")
    point = widget.rect().center()
    target = widget.childAt(point) or widget  # the bar or the figures under the pointer
    local = target.mapFrom(widget, point)
    QApplication.sendEvent(target, QHelpEvent(QEvent.Type.ToolTip, local, target.mapToGlobal(local)))
    return QToolTip.text() if QToolTip.isVisible() else ""


def part(tip: str, name: str) -> int:
    line = next(line for line in tip.splitlines() if line.startswith(name))
    return int(line.removeprefix(name).replace(",", ""))


async def test_the_header_shows_what_fills_the_context_and_what_happens_when_full(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    panel = gauge(window)
    shown = panel.header_widget()
    await until(lambda: shown.isVisible(), message="the gauge of a new chat")
    empty = await hover(shown)
    assert part(empty, "History: ") == 0 and part(empty, "System prompt: ") > 0  # a new chat: the prompt alone

    workspace = bridge.core.workspace
    (workspace / "tides.txt").write_text("high water at noon\n" * 60)
    fake.add({"tool_calls": [{"name": "read_file", "arguments": {"path": "tides.txt"}}]},
             {"content": "High water is at noon."})
    before = panel.label.text()
    window.send("When is high water?", [])
    await until(lambda: panel.label.text() != before, timeout=60, message="the gauge after the turn")

    tip = await hover(shown)
    assert all(name in tip for name in PARTS), tip
    assert part(tip, "History: ") > 0 and part(tip, "Tool results: ") > 60 * 3  # the file the tool read
    used = sum(part(tip, name) for name in PARTS)
    assert f"at most about {used:,} of 65,536 tokens" in tip  # the parts add up to the total shown
    window_tokens = bridge.core.config.context_window_tokens
    assert "summary soon" not in panel.label.text() and "summarised" in tip
    if SHOTS:
        shown.parentWidget().grab().save(os.path.join(SHOTS, "chat-context-gauge.png"))

    window.show_session(OTHER)  # another chat: its own, smaller, context
    await until(lambda: shown.isVisible() and part(shown.toolTip(), "History: ") == 0, message="the other chat")

    counted = used - part(tip, "Tool descriptions: ")  # what consolidation counts
    config = bridge.core.config
    config.context_window_tokens = int(counted / 0.9) + config.max_tokens + 1024  # at 90% of consolidation's budget
    window.show_session(KEY)
    await until(lambda: "summary soon" in panel.label.text(), message="the nearly full gauge")
    full = await hover(shown)
    assert "Nearly full" in full and "the oldest turns are summarised" in full
    assert shown.property("near") is True
    assert f" / {tokens_text(config.context_window_tokens)} · summary soon" in panel.label.text()
    if SHOTS:
        shown.parentWidget().grab().save(os.path.join(SHOTS, "chat-context-gauge-near.png"))
        tip_window = next(w for w in QApplication.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible())
        tip_window.grab().save(os.path.join(SHOTS, "chat-context-gauge-tooltip.png"))
    config.context_window_tokens = window_tokens

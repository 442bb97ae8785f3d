"""The chat header's context gauge: how much of the model's context window the chat shown will fill with the
next message ("12.3k / 64k" beside a small bar), and on hover what fills it, part by part, and what happens
as it fills (consolidation, desktop/memory/consolidator.py). A strip with nothing of its own above the composer.

Measured by the memory feature's ContextGauge in a worker thread (it reads the workspace's files) when a chat is
shown and after each of its turns; a measure that ends after another chat was shown is dropped."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from desktop.kernel.bus import Event, TurnError, TurnFinished
from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.memory.context_use import ContextUse
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.panel import ChatPanel
from desktop.usage.report import tokens_text

NEAR = 0.8  # of consolidation's budget: from here the gauge warns
WARN = "#c2410c"
STYLE = f"""
#contextGauge QLabel {{ color: palette(placeholder-text); }}
#contextGauge[near="true"] QLabel {{ color: {WARN}; font-weight: 600; }}
#contextGauge QProgressBar {{ border: 1px solid palette(mid); border-radius: 3px; background: palette(base); }}
#contextGauge QProgressBar::chunk {{ background: palette(highlight); border-radius: 2px; }}
#contextGauge[near="true"] QProgressBar::chunk {{ background: {WARN}; }}
"""


class ContextGaugePanel(ChatPanel):
    def __init__(self, memory: Memory, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory = memory
        self.session_key = ""
        self.gauge = QWidget()
        self.gauge.setObjectName("contextGauge")
        self.gauge.setStyleSheet(STYLE)
        layout = QHBoxLayout(self.gauge)
        layout.setContentsMargins(0, 0, 8, 0)
        layout.setSpacing(6)
        self.bar = QProgressBar()
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(44, 8)
        self.label = QLabel()
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        self.gauge.hide()
        bridge.event.connect(self._on_event)
        self.bridge = bridge
        self.hide()

    def show_session(self, key: str) -> None:
        self.session_key = key
        self.gauge.hide()
        spawn(self._measure(key))

    def header_widget(self) -> QWidget:
        return self.gauge

    def _on_event(self, event: Event) -> None:
        if isinstance(event, (TurnFinished, TurnError)) and event.session_key == self.session_key:
            spawn(self._measure(event.session_key))

    async def _measure(self, key: str) -> None:
        session = await self.bridge.load_chat(key)
        use = await asyncio.to_thread(self.memory.gauge.measure, session)
        if key == self.session_key:
            self._show(use)

    def _show(self, use: ContextUse) -> None:
        near = use.budget <= 0 or use.counted >= NEAR * use.budget
        self.gauge.setProperty("near", near)
        self.gauge.setStyleSheet(STYLE)  # a property the style reads changed: apply it again
        self.bar.setRange(0, max(use.window, 1))
        self.bar.setValue(min(use.used, use.window))
        self.label.setText(f"{tokens_text(use.used)} / {tokens_text(use.window)}"
                           + (" · summary soon" if near and use.budget > 0 else ""))
        self.gauge.setToolTip(describe(use))
        self.gauge.show()


def describe(use: ContextUse) -> str:
    """The gauge's tooltip: the total, each part, and what happens as the chat grows, in plain words."""
    share = f" ({use.used / use.window:.0%})" if use.window > 0 else ""
    lines = [f"Context: at most about {use.used:,} of {use.window:,} tokens{share} go to the model with your next "
             "message.", ""]
    lines += [f"{name.capitalize()}: {tokens:,}" for name, tokens in use.parts.items()]
    lines.append("")
    if use.budget <= 0:
        lines.append(f"The context window leaves no room beside the longest answer ({use.reply:,} tokens), so "
                     "nothing is summarised: raise the window or lower the longest answer in Settings.")
        return "\n".join(lines)
    start = (f"Summarising starts at {use.budget:,} tokens: the window less {use.reply:,} kept for the answer and a "
             "small margin, tool descriptions not counted.")
    half = ("the oldest turns are summarised and the model reads the summary instead, down to about "
            f"{use.budget // 2:,}.")
    if use.counted >= use.budget:
        lines += [f"Full ({use.counted:,} counted). {start}", f"Before your next message is sent, {half}"]
    elif use.counted >= NEAR * use.budget:
        lines += [f"Nearly full ({use.counted:,} counted). {start}", f"After an answer that reaches it, {half}"]
    else:
        lines += [start, f"After an answer that reaches it, {half}"]
    lines.append("You still see every message here; the summaries are kept in Memory & history.")
    return "\n".join(lines)

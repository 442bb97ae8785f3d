"""Hiding our window for a capture (desktop/ui/context/capture.py) while the app's other work goes on: nothing
there may run Qt's event loop inside the capture's own step, or a task woken meanwhile would be stepped inside
it, fail to enter ("another task is being executed") and never wake again — a turn, a save, a reminder hung
for good. It hung the portal tests' teardown in two of three runs made side by side."""

from __future__ import annotations

import asyncio

from PySide6.QtGui import QHideEvent
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from desktop.ui.context.capture import hidden_while


class _Window(QWidget):
    """Sets `hidden` the moment it is hidden: a task waiting on it is woken inside the capture's step."""

    def __init__(self, hidden: asyncio.Event) -> None:
        super().__init__()
        self.hidden = hidden

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        self.hidden.set()
        super().hideEvent(event)


async def test_a_task_woken_while_our_window_hides_for_a_capture_still_runs(qtbot: QtBot) -> None:
    hidden = asyncio.Event()
    window = _Window(hidden)
    qtbot.addWidget(window)
    window.show()

    async def other_work() -> str:
        await hidden.wait()
        await asyncio.sleep(0)
        return "done"

    work = asyncio.ensure_future(other_work())
    await asyncio.sleep(0.05)  # it waits
    async with hidden_while(window):
        assert not window.isVisible()
    async with asyncio.timeout(5):
        assert await work == "done"
    assert window.isVisible()

"""A chat window with the background tasks panel, as the app builds it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from desktop.subagents import Subagents
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.subagents.panel import TasksPanel
from tests.ui.conftest import until


@pytest.fixture
async def window(bridge: CoreBridge, qtbot) -> AsyncIterator[ChatWindow]:  # type: ignore[no-untyped-def]
    made = ChatWindow(bridge, [lambda: TasksPanel(bridge.core.get(Subagents), bridge)])
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session("desktop:test")
    await until(lambda: made.models["desktop:test"].loaded)
    yield made

"""The chat window on a running core, open on an empty chat, for the tests of this folder."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.ui.conftest import until


@pytest.fixture
async def window(bridge: CoreBridge, qtbot) -> AsyncIterator[ChatWindow]:  # type: ignore[no-untyped-def]
    made = ChatWindow(bridge)
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session("desktop:test")
    await until(lambda: made.models["desktop:test"].loaded)
    yield made  # pytest-qt closes and deletes it before fixtures are torn down

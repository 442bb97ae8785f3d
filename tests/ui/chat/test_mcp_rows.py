"""An MCP tool's row in the chat names its server ("test · echo"), live and after a reload."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.conversation.transcript import Kind, rows_from_messages
from desktop.mcp import McpServers
from desktop.mcp.manage import status_of
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.mcp.conftest import FAST, stdio_server
from tests.ui.chat.test_window import TURN, kinds, model_of, saved_messages, type_and_send
from tests.ui.conftest import until


@pytest.fixture
def model_config(model_config: dict[str, Any], home_dir: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The scripted model plus our test MCP server (restarts kept fast)."""
    monkeypatch.setattr("desktop.mcp.connection.BACKOFF", FAST)
    write_config(home_dir, **model_config, mcp={"servers": {"test": {**stdio_server(), "trusted": True}}})  # asks are tested elsewhere
    return model_config


def painted_texts(window: ChatWindow, index: int) -> list[str]:
    return [op.text for op in window.view.row_layout(index).ops if hasattr(op, "text")]


async def test_an_mcp_tool_row_names_its_server_also_after_a_reload(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    await until(lambda: status_of(bridge.core.get(McpServers), "test").state == "connected", timeout=60, message="server connected")
    fake.add({"tool_calls": [{"name": "mcp_test_echo", "arguments": {"text": "hi"}}]}, {"content": "Done."})
    type_and_send(qtbot, window, "echo hi")
    await until(lambda: not model_of(window).busy and Kind.ASSISTANT in kinds(window), timeout=TURN)
    row = model_of(window).rows[1]
    assert row.tool is not None and row.tool.ok is True and row.tool.name == "mcp_test_echo"
    window.view.viewport().repaint()
    assert "test · echo" in painted_texts(window, 1)
    assert "mcp_test_echo" not in painted_texts(window, 1)

    sent = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    assert sent and "label" not in sent[0]  # the model never sees it

    reloaded = rows_from_messages(saved_messages(bridge, "desktop:test"))  # as the next start reads the file
    assert reloaded[1].tool is not None and reloaded[1].tool.title == "test · echo"
    again = ChatWindow(bridge)
    qtbot.addWidget(again)
    again.resize(900, 640)
    again.show()
    again.show_session("desktop:test")
    await until(lambda: model_of(again).loaded)
    again.view.viewport().repaint()
    assert "test · echo" in painted_texts(again, 1)

"""The transcript view itself: how it scrolls, whatever the chat holds."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.ui.conftest import until


def write_chat(bridge: CoreBridge, key: str, turns: int) -> None:
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long"})]
    for i in range(turns):
        lines += [json.dumps({"role": "user", "content": f"question {i}"}),
                  json.dumps({"role": "assistant", "content": f"answer {i}"})]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


async def test_an_empty_chat_shows_no_scrollbar_after_a_long_one(window: ChatWindow, bridge: CoreBridge, qtbot,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    write_chat(bridge, "desktop:long", 60)
    window.show_session("desktop:long")
    await until(lambda: window.models["desktop:long"].loaded)
    window.resize(900, 660)  # as a window manager places it: the scroll area lays out its bars again
    bar = window.view.verticalScrollBar()
    await until(lambda: bar.isVisible(), message="the long chat scrolls")

    qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    assert window.models[window.current_key].rowCount() == 0
    await until(lambda: not bar.isVisible(), timeout=5, message="the scrollbar to go")  # nothing to scroll
    assert bar.maximum() == 0
    window.grab().save(str(tmp_path / "empty-chat.png"))

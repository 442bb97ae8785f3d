"""The chat header's Export menu on a real chat window and core: Markdown, HTML and PDF files of the chat shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from desktop.chats import ChatExport
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.chats.export_menu import ExportMenu
from tests.chats.conftest import a_chat
from tests.ui.conftest import until


@pytest.mark.parametrize("fmt", ["md", "html", "pdf"])
async def test_export_menu_writes_the_chat_shown(bridge: CoreBridge, qtbot: Any, tmp_path: Path, fmt: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    chat = a_chat(tmp_path / "photo.png")
    await bridge.core.sessions.rewrite(chat)
    window = ChatWindow(bridge, [lambda: ExportMenu(bridge.core.get(ChatExport))])
    qtbot.addWidget(window)
    window.show()
    window.show_session(chat.key)
    menu = window.findChild(ExportMenu)
    assert menu is not None and menu.button.isVisible() and menu.button.isEnabled()
    assert [a.text() for a in menu.button.menu().actions()] == ["Markdown…", "HTML page…", "PDF…"]

    out = tmp_path / f"friday.{fmt}"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_: (str(out), ""))  # the person picks the file
    menu.button.menu().actions()[["md", "html", "pdf"].index(fmt)].trigger()
    await until(lambda: out.exists() and menu.button.isEnabled(), timeout=30)
    data = out.read_bytes()
    if fmt == "md":
        assert data.decode().startswith("# Plans for <b>Friday</b>") and b"**You:**" in data
    elif fmt == "html":
        assert b"<strong>two</strong>" in data and b"data:image/png;base64," in data
    else:
        assert data.startswith(b"%PDF") and len(data) > 1000

"""The chat header with the Files column open, in the real chat window the app builds (every feature's header
widget in it): the chat's title keeps room to say which chat this is."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from desktop.session.session import Session
from desktop.ui.chat.window import ChatWindow
from desktop.ui.checkpoints.made import MadePanel
from tests.ui.conftest import until

SHOTS = os.environ.get("CHECKPOINTS_SCREENSHOTS")


async def test_the_title_elides_instead_of_vanishing_with_the_files_column_open(shell: Any) -> None:
    """With Files open, the header's buttons took its whole width and the title was squeezed to nothing: no word
    of which chat was shown. It now keeps room for its start, ending in "…", the whole title in its tooltip."""
    title = "Quarterly budget review with the finance team"
    await shell.core.sessions.rewrite(Session("desktop:budget", [{"role": "user", "content": "Hi"}],
                                              {"title": title}))
    shell.show_chat()
    window = shell.window("chat")
    assert isinstance(window, ChatWindow)
    await until(window.isVisible)
    window.resize(1040, 720)  # the window's own size
    window.show_session("desktop:budget")
    await until(lambda: window.title.text() == title, message="the chat shown")
    column = window.findChild(MadePanel)
    assert column is not None
    column.toggle.click()
    await until(lambda: column.side.isVisible(), message="the Files column open")
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / "header-files-open.png"))
    shown = window.title.shown()
    assert len(shown) >= 8 and shown.endswith("…") and title.startswith(shown[:-1]), repr(shown)
    assert window.title.isVisible() and window.title.toolTip() in ("", title)
    assert column.toggle.isVisible() and column.toggle.isChecked()

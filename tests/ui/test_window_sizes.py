"""Windows on a 1366x768 laptop: the real secondary windows can be made small enough to fit it with a panel and a
title bar, and the chat window comes back where it was left after the app restarts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import until
from tests.ui.test_app import _new_shell

SCREEN_WIDTH, SCREEN_HEIGHT = 1366, 768
DESKTOP_CHROME = 80  # a panel and the window's title bar take this much of the height


async def test_every_secondary_window_fits_a_small_laptop_screen(
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings and every window a feature registered (read from the shell, so a new one is checked too), as
    the shell builds them."""
    shell = _new_shell(tmp_path, monkeypatch)
    task = asyncio.ensure_future(shell.run())
    await until(lambda: shell.core is not None and shell.core.running, timeout=60)
    try:
        kinds = sorted(shell._builders)  # the secondary windows: Settings's own and each feature's add_window
        assert "settings" in kinds and len(kinds) > 1, kinds
        for kind in kinds:
            shell.open_window(kind)
            window = shell.window(kind)
            assert window is not None
            await asyncio.sleep(0.3)  # lists and notes filled in by their first loads
            smallest = window.minimumSizeHint().expandedTo(window.minimumSize())
            assert smallest.width() <= SCREEN_WIDTH, f"{kind}: at least {smallest.width()} px wide"
            assert smallest.height() <= SCREEN_HEIGHT - DESKTOP_CHROME, f"{kind}: at least {smallest.height()} px high"
    finally:
        shell.quit()
        assert await asyncio.wait_for(task, 30) == 0
        for widget in QApplication.topLevelWidgets():
            widget.close()


async def test_the_chat_window_comes_back_where_it_was_left_after_a_restart(
        model_config: dict[str, Any], memory_keyring: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placed = QRect(30, 40, 700, 500)
    for run in (1, 2):
        shell = _new_shell(tmp_path, monkeypatch)
        task = asyncio.ensure_future(shell.run())
        await until(lambda s=shell: s.core is not None and s.core.running, timeout=60)  # type: ignore[misc]
        shell.show_chat()
        chat = shell.window("chat")
        assert chat is not None
        await until(chat.isVisible)
        if run == 1:
            chat.setGeometry(placed)
            await asyncio.sleep(0.1)
        else:
            assert chat.geometry() == placed
        shell.quit()  # with the window still open, as a user quits from the tray
        assert await asyncio.wait_for(task, 30) == 0
        for widget in QApplication.topLevelWidgets():
            widget.close()

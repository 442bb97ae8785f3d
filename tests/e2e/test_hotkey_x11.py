"""The X11 hotkey backend against a real X server: key grab, delivery on the GUI thread, conflicts."""

from __future__ import annotations

import asyncio

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from desktop.ui.hotkey import Hotkey
from tests.e2e.xdesktop import Desktop
from tests.ui.conftest import until

pytestmark = pytest.mark.e2e


async def _press(desktop: Desktop, chord: str) -> None:
    proc = await asyncio.create_subprocess_exec("xdotool", "key", chord, env=desktop.env)
    assert await asyncio.wait_for(proc.wait(), 10) == 0


async def test_a_grabbed_chord_fires_on_the_gui_thread_and_conflicts_are_explained(
        desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISPLAY", desktop.env["DISPLAY"])
    for var in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        monkeypatch.delenv(var, raising=False)
    first, second = Hotkey(), Hotkey()
    presses: list[bool] = []
    first.activated.connect(lambda: presses.append(QThread.currentThread() is QApplication.instance().thread()))
    try:
        status = await first.bind("Ctrl+Shift+F9")
        assert status.active and status.backend == "x11" and status.message == "Ctrl+Shift+F9 via X11 key grab"
        await _press(desktop, "ctrl+shift+F9")
        await until(lambda: presses == [True])
        await _press(desktop, "ctrl+F9")  # not the chord
        await asyncio.sleep(0.3)
        assert presses == [True]

        taken = await second.bind("ctrl+shift+f9")
        assert not taken.active
        assert "Ctrl+Shift+F9 is already used by another program" in taken.message and taken.hint

        await first.bind("Ctrl+Shift+F10")  # rebinding frees the old chord for others
        assert (await second.bind("Ctrl+Shift+F9")).active
    finally:
        first.stop()
        second.stop()

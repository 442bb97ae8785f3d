"""Desktop context in the app: two global hotkeys that open the quick prompt with what is on screen attached
(`hotkeys.selection`: the selected text, else the clipboard; `hotkeys.screen`: a screenshot of the window in
front), the chips that show it before sending and the `+` menu in the quick prompt and the chat composer
(shelf.py), and a Settings page for the two keys.

The keys are grabbed on X11 only: the Wayland GlobalShortcuts portal would show them under the quick
prompt's description. On Wayland the `+` menu's screenshot opens the desktop portal's own dialog instead. A key another
program holds is reported as the quick prompt's is: a notification saying which and what to do."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from typing import TYPE_CHECKING

from desktop.kernel.notices import Notice
from desktop.kernel.taskset import TaskSet
from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:
    from PySide6.QtWidgets import QWidget

    from desktop.ui.quick_prompt import QuickPrompt

log = logging.getLogger(__name__)
CAPTION = ("Keys that open the quick prompt with what is on screen attached, and the key that dictates into it "
           "(its speech model is on the Voice page).")


def attach_ui(host: UiHost) -> None:
    def settings_page() -> QWidget:
        from desktop.ui.setting_rows import SettingsGroup

        return SettingsGroup("hotkeys")

    host.add_settings_page("Desktop context", CAPTION, settings_page)
    kept: list[ContextKeys] = []  # the keys live as long as the app

    def ready() -> None:
        kept.append(ContextKeys(host))
        kept[0].start()

    host.on_ready(ready)


class ContextKeys:
    """The two hotkeys, bound now and again whenever their settings change."""

    def __init__(self, host: UiHost) -> None:
        from desktop.context import DesktopContext
        from desktop.ui.hotkey import Hotkey, detect_backend

        self.host = host
        self.service = host.get(DesktopContext)
        self._x11 = detect_backend() == "x11"
        self._tasks = TaskSet("desktop context keys")
        self.selection = Hotkey(main=False)
        self.screen = Hotkey(main=False)
        self.selection.activated.connect(lambda: self._tasks.spawn(self.ask_about_selection()))
        self.screen.activated.connect(lambda: self._tasks.spawn(self.ask_about_screen()))

    def start(self) -> None:
        if not self._x11:
            log.info("the desktop-context hotkeys are X11 only; the quick prompt's + menu offers the same")
            return
        self.host.bridge.settings.subscribe("hotkeys", lambda _keys: self._tasks.spawn(self.bind()))
        self._tasks.spawn(self.bind())

    async def bind(self) -> None:
        keys = self.service.hotkeys
        for hotkey, chord, what in ((self.selection, keys.selection, "asking about the selection"),
                                    (self.screen, keys.screen, "asking about the screen")):
            status = await hotkey.bind(chord)
            if not status.active and status.backend != "none":
                self.host.notify(Notice(f"Hotkey for {what} unavailable",
                                        f"{status.message}\nChange it under Settings → Desktop context."))

    def _quick(self) -> QuickPrompt | None:
        from desktop.ui.quick_prompt import QuickPrompt

        quick = self.host.window("quick")
        return quick if isinstance(quick, QuickPrompt) else None

    async def ask_about_selection(self) -> None:
        """Read the selection (off the GUI thread: its owner may be slow to answer), then show it."""
        from desktop.ui.context.capture import read_x11_selection

        began = time.perf_counter()
        found = await asyncio.to_thread(read_x11_selection)
        quick = self._quick()
        if quick is None:
            return
        quick.popup()
        if found is None:
            quick.shelf.say("Nothing is selected, and the clipboard holds no text.")
        else:
            quick.shelf.add_snippet(found)
        log.info("quick prompt with %s shown in %.0f ms", found.source if found else "no selection",
                 (time.perf_counter() - began) * 1000)

    async def ask_about_screen(self) -> None:
        """Grab the window in front before the quick prompt shows (it is never in the picture); when the quick
        prompt is already up, it steps aside for the window behind it."""
        from desktop.context.x11 import active_window
        from desktop.ui.context.capture import grab_window

        quick = self._quick()
        if quick is None:
            return
        if quick.isVisible():
            await quick.shelf.take_window()
            return
        front = active_window()
        if front is None or front.pid == os.getpid() and front.title == quick.windowTitle():
            quick.popup()
            quick.shelf.say("No window to take a picture of: this needs X11 with a window manager.")
            return
        began = time.perf_counter()
        picture = grab_window(front.wid)
        quick.popup()
        await quick.shelf.add_picture(picture, f"Screenshot of “{front.title}”" if front.title else "Screenshot")
        log.info("quick prompt with a screenshot of %r (%dx%d) shown in %.0f ms", front.title, picture.width(),
                 picture.height(), (time.perf_counter() - began) * 1000)


UI_FEATURE = UiFeature("context", attach_ui)

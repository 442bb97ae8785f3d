"""X11: grab the chord on the root window, read key events from the X connection on the Qt thread.

The grab is repeated with CapsLock and NumLock on (X matches modifier state exactly), and a grab held
by another client (BadAccess) becomes a clear conflict message instead of a silent no-op."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QSocketNotifier

from desktop.ui.hotkey import Chord, HotkeyError

log = logging.getLogger(__name__)

_KEYSYM_NAMES = {"space": "space", "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape",
                 "tab": "Tab", "backspace": "BackSpace", "del": "Delete", "delete": "Delete", "ins": "Insert",
                 "insert": "Insert", "home": "Home", "end": "End", "pgup": "Prior", "pageup": "Prior",
                 "pgdown": "Next", "pagedown": "Next", "up": "Up", "down": "Down", "left": "Left",
                 "right": "Right", "print": "Print", "pause": "Pause", "menu": "Menu"}


def keysym_name(key: str) -> str:
    """Our lower-case key name → the X keysym name ("f12" → "F12", "space" → "space", "k" → "k")."""
    if key in _KEYSYM_NAMES:
        return _KEYSYM_NAMES[key]
    if key[:1] == "f" and key[1:].isdigit():
        return key.upper()
    return key


def grab(chord: Chord) -> tuple[Any, int, list[tuple[int, int]]]:
    """Open a display connection and grab `chord` in all lock variants → (display, keycode, grabs)."""
    try:
        from Xlib import XK, X, display, error
    except ImportError as exc:
        raise HotkeyError("python-xlib is not installed, so the hotkey cannot be grabbed on X11 "
                          "(pip install python-xlib)") from exc
    try:
        d = display.Display()
    except Exception as exc:  # DisplayConnectionError and friends
        raise HotkeyError(f"cannot open the X display for the hotkey: {exc}") from exc
    keysym = XK.string_to_keysym(keysym_name(chord.key))
    keycode = d.keysym_to_keycode(keysym) if keysym else 0
    if not keycode:
        d.close()
        raise HotkeyError(f"the key '{chord.key}' in {chord} is not on this keyboard")
    masks = {"ctrl": X.ControlMask, "alt": X.Mod1Mask, "shift": X.ShiftMask, "super": X.Mod4Mask}
    mask = 0
    for modifier in chord.modifiers:
        mask |= masks[modifier]
    catch = error.CatchError(error.BadAccess)
    grabs = [(keycode, mask | extra) for extra in (0, X.LockMask, X.Mod2Mask, X.LockMask | X.Mod2Mask)]
    root = d.screen().root
    for code, modifiers in grabs:
        root.grab_key(code, modifiers, True, X.GrabModeAsync, X.GrabModeAsync, onerror=catch)
    d.sync()  # X reports errors asynchronously; sync makes a BadAccess arrive now
    if catch.get_error():
        release(d, grabs)
        raise HotkeyError(f"{chord} is already used by another program (the X server refused the grab). "
                          "Pick another hotkey in Settings, or free it in that program.")
    return d, keycode, grabs


def release(d: Any, grabs: list[tuple[int, int]]) -> None:
    try:
        root = d.screen().root
        for code, modifiers in grabs:
            root.ungrab_key(code, modifiers)
        d.close()
    except Exception:  # the X server may already be gone at logout
        log.debug("releasing the X11 hotkey grab failed", exc_info=True)


class X11Grab:
    def __init__(self) -> None:
        self._display: Any = None
        self._notifier: QSocketNotifier | None = None
        self._grabs: list[tuple[int, int]] = []
        self._fire: Callable[[], None] = lambda: None
        self._keycode = 0

    async def start(self, chord: Chord, fire: Callable[[], None]) -> None:
        self._display, self._keycode, self._grabs = grab(chord)
        self._fire = fire
        self._notifier = QSocketNotifier(self._display.fileno(), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._drain)
        self._drain()  # events read during sync() sit in Xlib's queue, not on the socket

    def _drain(self) -> None:
        from Xlib import X

        d = self._display
        if d is None:
            return
        try:
            while d.pending_events():
                event = d.next_event()
                if event.type == X.KeyPress and event.detail == self._keycode:
                    self._fire()
        except Exception as exc:  # the X connection broke (server gone): stop watching a dead socket
            log.warning("the X11 hotkey stopped working: %s", exc)
            if self._notifier is not None:
                self._notifier.setEnabled(False)

    def stop(self) -> None:
        if self._display is None:
            return
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        release(self._display, self._grabs)
        self._display = None

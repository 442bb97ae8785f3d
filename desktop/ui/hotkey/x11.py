"""X11: grab the chord on the root window, read key events from the X connection on the Qt thread.

The grab is repeated with CapsLock and NumLock on (X matches modifier state exactly), and a grab held
by another client (BadAccess) becomes a clear conflict message instead of a silent no-op.

A held key repeats: X sends a release and a press with the same timestamp, over and over. Those pairs are
dropped, so holding the chord is one press and, when it is let go, one release (reported REPEAT_GAP_MS late:
until then a press of the same moment may still show it was the keyboard repeating)."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QSocketNotifier, QTimer

from desktop.ui.hotkey import Chord, Fire, HotkeyError

log = logging.getLogger(__name__)
REPEAT_GAP_MS = 30  # a release is the key let go unless a press of the same X time follows within this

_KEYSYM_NAMES = {"space": "space", "enter": "Return", "return": "Return", "esc": "Escape", "escape": "Escape",
                 "tab": "Tab", "backspace": "BackSpace", "del": "Delete", "delete": "Delete", "ins": "Insert",
                 "insert": "Insert", "home": "Home", "end": "End", "pgup": "Prior", "pageup": "Prior",
                 "pgdown": "Next", "pagedown": "Next", "up": "Up", "down": "Down", "left": "Left",
                 "right": "Right", "print": "Print", "pause": "Pause", "menu": "Menu"}


def is_key_name(key: str) -> bool:
    """Whether `key` (lower case) names a key every backend can grab: one character, F1–F35 or a named key
    (pynput_backend.py takes these names too). Anything else is no keysym, and its grab never fires."""
    return len(key) == 1 or key in _KEYSYM_NAMES or key[:1] == "f" and key[1:].isdigit() and 1 <= int(key[1:]) <= 35


KEY_NAMES_HINT = ("use a letter, a digit, F1–F35, or Space, Enter, Esc, Tab, Backspace, Delete, Insert, Home, End, "
                  "PageUp, PageDown, Up, Down, Left, Right, Print, Pause or Menu")


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
        self._fire: Fire = lambda _pressed: None
        self._keycode = 0
        self._let_go: int | None = None  # the X time of a release not reported yet (it may be a repeat)
        self._release_timer = QTimer()
        self._release_timer.setSingleShot(True)
        self._release_timer.setInterval(REPEAT_GAP_MS)
        self._release_timer.timeout.connect(self._report_release)

    async def start(self, chord: Chord, fire: Fire) -> None:
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
                if event.type not in (X.KeyPress, X.KeyRelease) or event.detail != self._keycode:
                    continue
                if event.type == X.KeyRelease:
                    self._let_go = event.time
                    self._release_timer.start()
                elif self._let_go is not None and (event.time - self._let_go) & 0xFFFFFFFF <= 1:
                    self._let_go = None  # the keyboard repeating a held key: neither let go nor pressed
                    self._release_timer.stop()
                else:
                    self._report_release()  # let go a moment ago, pressed again now
                    self._fire(True)
        except Exception as exc:  # the X connection broke (server gone): stop watching a dead socket
            log.warning("the X11 hotkey stopped working: %s", exc)
            if self._notifier is not None:
                self._notifier.setEnabled(False)

    def _report_release(self) -> None:
        self._release_timer.stop()
        if self._let_go is not None:
            self._let_go = None
            self._fire(False)

    def stop(self) -> None:
        self._release_timer.stop()
        self._let_go = None
        if self._display is None:
            return
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        release(self._display, self._grabs)
        self._display = None

"""The global hotkey that opens the quick prompt, on whichever mechanism this desktop offers.

X11: a key grab on the X connection. Wayland: the xdg-desktop-portal GlobalShortcuts interface when
the portal has it. Windows/macOS: pynput. Where none works, the user binds `nanobot-tray --quick`
in the desktop's own shortcut settings, and Settings/doctor say so. Every backend reports a press
by calling `fire(True)`, which emits a Qt signal: presses seen on another thread reach the GUI thread queued.
The X11 grab also reports the key's release (`fire(False)`, the `released` signal), for a key held while it
acts (dictation); the portal and pynput backends report presses only."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import QObject, Signal

log = logging.getLogger(__name__)

BIND_COMMAND = "nanobot-tray --quick"
BIND_HINT = (f"Bind the command `{BIND_COMMAND}` to a key in your desktop's keyboard shortcut settings; "
             "it opens the quick prompt (and starts the app if needed).")
BACKEND_LABELS = {"x11": "X11 key grab", "portal": "xdg-desktop-portal GlobalShortcuts",
                  "pynput": "pynput", "none": "none available"}
_MODIFIERS = {"ctrl": "ctrl", "control": "ctrl", "alt": "alt", "shift": "shift",
              "super": "super", "meta": "super", "win": "super", "cmd": "super", "logo": "super"}
_ORDER = ("ctrl", "alt", "shift", "super")


Fire = Callable[[bool], None]  # True: the chord was pressed; False: its key was let go


class HotkeyError(RuntimeError):
    """The hotkey could not be registered; the message says why and what to do."""


@dataclass(frozen=True)
class Chord:
    modifiers: frozenset[str]  # subset of ctrl, alt, shift, super
    key: str  # lower case: "space", "k", "f12", "return"

    def __str__(self) -> str:
        mods = [m.capitalize() for m in _ORDER if m in self.modifiers]
        key = self.key.upper() if len(self.key) == 1 or self.key[:1] == "f" and self.key[1:].isdigit() \
            else self.key.capitalize()
        return "+".join([*mods, key])


def parse_chord(text: str) -> Chord:
    """'Ctrl+Alt+Space' → Chord; ValueError with a message a person can act on."""
    parts = [p.strip().lower() for p in text.split("+")]
    if not text.strip() or any(not p for p in parts):
        raise ValueError(f"'{text}' is not a hotkey; write it like Ctrl+Alt+Space")
    *mods, key = parts
    unknown = [m for m in mods if m not in _MODIFIERS]
    if unknown:
        raise ValueError(f"'{unknown[0]}' in '{text}' is not a modifier; use Ctrl, Alt, Shift or Super")
    if key in _MODIFIERS:
        raise ValueError(f"'{text}' has no key besides the modifiers; add one, e.g. Ctrl+Alt+Space")
    if not mods:
        raise ValueError(f"'{text}' needs at least one modifier (Ctrl, Alt, Shift or Super), "
                         "or it would swallow that key everywhere")
    return Chord(frozenset(_MODIFIERS[m] for m in mods), key)


@dataclass(frozen=True)
class HotkeyStatus:
    backend: str  # x11 | portal | pynput | none
    chord: str
    active: bool
    message: str  # one line for Settings and doctor

    @property
    def hint(self) -> str | None:
        """What to bind by hand when no global hotkey works here."""
        return None if self.active else BIND_HINT


class Backend(Protocol):
    async def start(self, chord: Chord, fire: Fire) -> None: ...

    def stop(self) -> None: ...


def detect_backend() -> str:
    """The mechanism this session would use (before trying it)."""
    if sys.platform in ("win32", "darwin"):
        return "pynput"
    if os.environ.get("WAYLAND_DISPLAY") or os.environ.get("XDG_SESSION_TYPE") == "wayland":
        return "portal"  # an X grab under XWayland only sees keys aimed at X windows
    if os.environ.get("DISPLAY"):
        return "x11"
    return "none"


def _make(name: str) -> Backend | None:
    if name == "x11":
        from desktop.ui.hotkey.x11 import X11Grab
        return X11Grab()
    if name == "portal":
        from desktop.ui.hotkey.portal import PortalShortcut
        return PortalShortcut()
    if name == "pynput":
        from desktop.ui.hotkey.pynput_backend import PynputHotkey
        return PynputHotkey()
    return None


_current: HotkeyStatus | None = None


def current_status(chord: str = "Ctrl+Alt+Space") -> HotkeyStatus:
    """The running app's hotkey status; before any binding, what this session would use."""
    if _current is not None:
        return _current
    backend = detect_backend()
    if backend == "none":
        return HotkeyStatus(backend, chord, False, "no global hotkey mechanism in this session (no display)")
    return HotkeyStatus(backend, chord, False, f"{chord} via {BACKEND_LABELS[backend]} (not registered yet)")


class Hotkey(QObject):
    """Owns the active binding. `activated` is emitted on the GUI thread for each press, and `released` when
    the key is let go (X11 only: elsewhere nothing says so)."""

    activated = Signal()
    released = Signal()

    def __init__(self, parent: QObject | None = None, *, main: bool = True) -> None:
        super().__init__(parent)
        self._backend: Backend | None = None
        self._main = main  # the quick prompt's own key, whose status Settings and doctor show

    async def bind(self, text: str) -> HotkeyStatus:
        """Replace the current binding with `text`; the returned status says whether it works."""
        global _current
        status = await self._bind(text)
        if self._main:
            _current = status
        return status

    async def _bind(self, text: str) -> HotkeyStatus:
        self.stop()
        name = detect_backend()
        try:
            chord = parse_chord(text)
        except ValueError as exc:
            return HotkeyStatus(name, text, False, str(exc))
        backend = _make(name)
        if backend is None:
            return HotkeyStatus(name, str(chord), False, "no global hotkey mechanism in this session")
        try:
            await backend.start(chord, self._fire)
        except HotkeyError as exc:
            log.warning("global hotkey: %s", exc)
            return HotkeyStatus(name, str(chord), False, str(exc))
        self._backend = backend
        status = HotkeyStatus(name, str(chord), True, f"{chord} via {BACKEND_LABELS[name]}")
        log.info("global hotkey: %s", status.message)
        return status

    def _fire(self, pressed: bool) -> None:
        (self.activated if pressed else self.released).emit()

    def stop(self) -> None:
        if self._backend is not None:
            self._backend.stop()
            self._backend = None

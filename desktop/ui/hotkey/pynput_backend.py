"""Windows and macOS: pynput's GlobalHotKeys listener thread (it observes keys without grabbing them).

Imported only on those systems; pynput raises ImportError at import where it has no display."""

from __future__ import annotations

from typing import Any

from desktop.ui.hotkey import Chord, Fire, HotkeyError

_MODS = {"ctrl": "<ctrl>", "alt": "<alt>", "shift": "<shift>", "super": "<cmd>"}
_NAMED = {"space", "enter", "esc", "tab", "backspace", "delete", "insert", "home", "end", "up", "down",
          "left", "right", "page_up", "page_down", "pause", "menu", "print_screen"}
_ALIASES = {"return": "enter", "escape": "esc", "del": "delete", "ins": "insert", "pgup": "page_up",
            "pageup": "page_up", "pgdown": "page_down", "pagedown": "page_down", "print": "print_screen"}


def pynput_combo(chord: Chord) -> str:
    """Chord → pynput's hotkey syntax, e.g. <ctrl>+<alt>+<space>."""
    key = _ALIASES.get(chord.key, chord.key)
    if key in _NAMED or key[:1] == "f" and key[1:].isdigit():
        key = f"<{key}>"
    return "+".join([*(_MODS[m] for m in ("ctrl", "alt", "shift", "super") if m in chord.modifiers), key])


class PynputHotkey:
    def __init__(self) -> None:
        self._listener: Any = None

    async def start(self, chord: Chord, fire: Fire) -> None:
        try:
            from pynput import keyboard
        except ImportError as exc:
            raise HotkeyError(f"pynput is not available, so no global hotkey ({exc})") from exc
        try:
            listener = keyboard.GlobalHotKeys({pynput_combo(chord): lambda: fire(True)})
        except ValueError as exc:
            raise HotkeyError(f"pynput cannot listen for {chord}: {exc}") from exc
        listener.daemon = True
        listener.start()
        self._listener = listener

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener = None

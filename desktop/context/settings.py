"""The `hotkeys` section of config.yaml: the key chords that bring what is on screen into the quick prompt, and
the one that dictates into it (desktop/config.py says how a section is declared; the quick prompt's own key
stays `hotkey`; dictation's other settings are the `voice` section, desktop/voice/settings.py)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import Section, setting


@dataclass
class HotkeysConfig:
    selection: str = setting("Ctrl+Alt+A", label="Ask about the selection",
                             help="Opens the quick prompt with the selected text (else the clipboard) attached.")
    screen: str = setting("Ctrl+Alt+Shift+A", label="Ask about the screen",
                          help="Opens the quick prompt with a screenshot of the window in front attached.")
    dictate: str = setting("Ctrl+Alt+D", label="Dictate",
                           help="Records what you say into the message box (the chat's when it is in front, else "
                           "the quick prompt's): press again to stop, or hold it while you speak.")


SECTION = Section("hotkeys", HotkeysConfig, label="Hotkeys",
                  help="Key chords that open the quick prompt with what is on screen attached, or dictate into it.")

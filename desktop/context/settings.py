"""The `hotkeys` section of config.yaml: the key chords that bring what is on screen into the quick prompt
(desktop/config.py says how a section is declared; the quick prompt's own key stays `hotkey`)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.config import Section, setting


@dataclass
class HotkeysConfig:
    selection: str = setting("Ctrl+Alt+A", label="Ask about the selection",
                             help="Opens the quick prompt with the selected text (else the clipboard) attached.")
    screen: str = setting("Ctrl+Alt+Shift+A", label="Ask about the screen",
                          help="Opens the quick prompt with a screenshot of the window in front attached.")


SECTION = Section("hotkeys", HotkeysConfig, label="Hotkeys",
                  help="Key chords that open the quick prompt with what is on screen attached.")

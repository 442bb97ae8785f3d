"""Small building blocks shared by Settings and onboarding, so both forms look and read alike."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLayout, QVBoxLayout, QWidget

OK_COLOUR, WARN_COLOUR, ERROR_COLOUR = "#2e7d32", "#b26a00", "#c0392b"


def heading(text: str) -> QLabel:
    label = QLabel(text)
    label.setStyleSheet("font-weight: bold; padding-top: 6px;")
    return label


def note_label(text: str = "") -> QLabel:
    """Grey explanatory text that wraps and can be selected (to copy a command or a path)."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    set_note(label, text, None)
    return label


def set_note(label: QLabel, text: str, colour: str | None) -> None:
    """Show a message in a colour (green success, amber warning, red error) or in grey."""
    label.setText(text)
    label.setStyleSheet(f"color: {colour};" if colour else "color: palette(placeholder-text);")


def with_note(field: QWidget | QLayout, note: QLabel) -> QWidget:
    """A field with its explanation right under it (a form row of its own would leave a gap)."""
    box = QWidget()
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(4)
    if isinstance(field, QLayout):
        layout.addLayout(field)
    else:
        layout.addWidget(field)
    layout.addWidget(note)
    return box

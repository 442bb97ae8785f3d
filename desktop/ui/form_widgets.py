"""Small building blocks shared by Settings and onboarding, so both forms look and read alike."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QLayout, QMessageBox, QVBoxLayout, QWidget

from desktop.config import Config
from desktop.settings import SettingsError
from desktop.ui.bridge import CoreBridge

OK_COLOUR, WARN_COLOUR, ERROR_COLOUR = "#2e7d32", "#b26a00", "#c0392b"


def heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.08)
    label.setFont(font)
    label.setContentsMargins(0, 6, 0, 0)
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


async def confirm_replace_broken(parent: QWidget, problems: list[str], unreadable: bool = False) -> bool:
    """Ask before a config.yaml that could not be fully read is replaced (its old text is kept as a copy).
    `unreadable`: none of it could be read (not YAML at all), not just some settings."""
    said = ("config.yaml could not be read at all, so none of your settings in it could be used" if unreadable
            else "config.yaml has problems, so some of your settings could not be read")
    box = QMessageBox(QMessageBox.Icon.Warning, "Replace config.yaml?",
                      f"{said} ({problems[0]}). Saving replaces the file with the settings shown here; the old "
                      "file is kept as a copy next to it.", QMessageBox.StandardButton.NoButton, parent)
    box.setDetailedText("\n".join(problems))
    replace = box.addButton("Save and keep a copy", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def decided(_result: int) -> None:
        if not answer.done():
            answer.set_result(box.clickedButton() is replace)

    box.finished.connect(decided)
    box.open()  # not exec(): a nested event loop would stall the agent
    return await answer


async def save_edited_config(parent: QWidget, bridge: CoreBridge,
                             edit: Callable[[Config], str | None]) -> tuple[bool, str]:
    """Read config.yaml as it is now (hand edits survive), let `edit` put the form's values in (it returns a
    message when one is wrong), ask before replacing a file that had problems, then save and apply.
    Returns whether it saved and a line for the user."""
    current = await bridge.settings.read()
    config = current.config
    wrong = edit(config)
    if wrong:
        return False, wrong
    if current.problems and not await confirm_replace_broken(parent, current.problems, current.unreadable):
        return False, "Not saved: config.yaml was left as it is."
    before = bridge.workspace
    try:
        kept = await bridge.save_settings(config, keep_broken_copy=bool(current.problems))
    except SettingsError as exc:
        return False, str(exc)
    except OSError as exc:
        return False, f"Could not save: {exc}"
    message = "Saved. Changes are in effect."
    if kept is not None:
        message += f" The old file was kept as {kept.name}."
    if bridge.workspace != before:
        message += f" Workspace: {bridge.workspace}."
    return True, message

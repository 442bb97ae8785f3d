"""Small building blocks shared by Settings and onboarding, so both forms look and read alike."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QLayout,
    QMessageBox,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.config import Config
from desktop.settings import SettingsError
from desktop.ui.bridge import CoreBridge
from desktop.ui.plain_text import plain_box

OK_COLOUR, WARN_COLOUR, ERROR_COLOUR = "#2e7d32", "#b26a00", "#c0392b"
T = TypeVar("T")


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
    """Show a message in a colour (green success, amber warning, red error) or in grey, as the words it is: a note
    often quotes what a server, a file or an error said, and markup there could name a file for Qt to read."""
    label.setTextFormat(Qt.TextFormat.PlainText)
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


class _WheelGuard(QObject):
    """A drop-down or number box that has not been clicked into passes the wheel to the page around it.
    Scrolling a long form over its fields otherwise changes whichever field passes under the pointer (the
    network for commands went from "Public internet only" to "This computer's network" in two notches)."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if (event.type() != QEvent.Type.Wheel or not isinstance(event, QWheelEvent)
                or not isinstance(watched, QWidget) or watched.hasFocus()):
            return False
        _scroll_around(watched, event)
        event.accept()  # handled here: Qt must not also hand it to the parents (it would scroll twice)
        return True


def _scroll_around(widget: QWidget, event: QWheelEvent) -> None:
    """Give the wheel to the nearest scrolling area around `widget` that can still move (a table, then the
    page), as Qt does with a wheel nobody under the pointer takes."""
    area = widget.parentWidget()
    while area is not None:
        if isinstance(area, QAbstractScrollArea):
            viewport = area.viewport()
            passed = QWheelEvent(viewport.mapFromGlobal(event.globalPosition()), event.globalPosition(),
                                 event.pixelDelta(), event.angleDelta(), event.buttons(), event.modifiers(),
                                 event.phase(), event.inverted())
            passed.ignore()
            QApplication.sendEvent(viewport, passed)
            if passed.isAccepted():
                return
        area = area.parentWidget()


_guard: _WheelGuard | None = None


async def while_greyed(hold: QWidget, waited: Awaitable[T]) -> T:
    """Await `waited` with `hold` (the fields being saved) greyed: typed there meanwhile, a value would be neither
    checked nor saved. The cursor goes back where it was in `hold`, unless `waited` gave `hold` back itself (a
    refused save puts the cursor in the field to fix)."""
    focused = QApplication.focusWidget()
    hold.setEnabled(False)
    try:
        return await waited
    finally:
        if hold.testAttribute(Qt.WidgetAttribute.WA_Disabled):
            hold.setEnabled(True)
            if focused is not None and isValid(focused) and hold.isAncestorOf(focused):
                focused.setFocus(Qt.FocusReason.OtherFocusReason)


def wheel_needs_focus(root: QWidget) -> None:
    """Every drop-down (editable or not) and number box in `root`, and `root` if it is one, changes on the mouse
    wheel only once it has keyboard focus (clicked or tabbed into); until then the wheel scrolls the page.
    Call it on a form once built, and again on a part that makes its fields anew (a table's rows); calling it
    twice on a widget does nothing more."""
    global _guard
    if _guard is None:
        _guard = _WheelGuard(QApplication.instance())
    fields = [w for w in [root, *root.findChildren(QWidget)] if isinstance(w, (QComboBox, QAbstractSpinBox))]
    for field in fields:
        if field.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel itself must not give it focus
        field.installEventFilter(_guard)  # Qt keeps one entry per filter, however often installed


async def confirm(parent: QWidget, title: str, text: str, accept: str, detail: str = "",
                  icon: QMessageBox.Icon = QMessageBox.Icon.Question) -> bool:
    """Ask a yes-or-no question in a box over `parent`: True when `accept` (the yes button's words) is
    clicked, False for Cancel or the box closed. `text` shows as words: it often names what it acts on as others
    named it (a server, a skill's folder, a reminder, a chat)."""
    box = plain_box(icon, title, text, QMessageBox.StandardButton.NoButton, parent)
    if detail:
        box.setDetailedText(detail)
    yes = box.addButton(accept, QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))  # Enter must not agree by accident
    answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def decided(_result: int) -> None:
        if not answer.done():
            answer.set_result(box.clickedButton() is yes)
        box.deleteLater()

    box.finished.connect(decided)
    box.open()  # not exec(): a nested event loop would stall the agent
    return await answer


async def confirm_replace_broken(parent: QWidget, problems: list[str], unreadable: bool = False) -> bool:
    """Ask before a config.yaml that could not be fully read is replaced (its old text is kept as a copy).
    `unreadable`: none of it could be read (not YAML at all), not just some settings."""
    said = ("config.yaml could not be read at all, so none of your settings in it could be used" if unreadable
            else "config.yaml has problems, so some of your settings could not be read")
    return await confirm(parent, "Replace config.yaml?",
                         f"{said} ({problems[0]}). Saving replaces the file with the settings shown here; the old "
                         "file is kept as a copy next to it.", "Save and keep a copy", "\n".join(problems),
                         icon=QMessageBox.Icon.Warning)


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

"""The skills window's questions (name, file, confirmation) as awaitables.

Dialogs are opened with open() and awaited through a future, never exec(): a nested event loop
inside a coroutine on the qasync loop would stall other tasks."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Collection
from pathlib import Path

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from desktop.skills.frontmatter import MAX_NAME, is_valid_name
from desktop.ui.skills.model import GREY, RED


async def run_dialog(dialog: QDialog) -> int:
    """Show `dialog` window-modally and wait for its result without blocking the loop. The caller
    reads what it needs from the dialog, then deletes it (deleteLater)."""
    done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def finished(result: int) -> None:
        if not done.done():
            done.set_result(result)

    dialog.finished.connect(finished)
    dialog.open()
    return await done


def suggest_name(text: str) -> str:
    """'My Report Tool!' -> 'my-report-tool': what the user probably meant."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:MAX_NAME].strip("-")


def name_problem(name: str, taken: Collection[str]) -> str:
    """Why `name` cannot be a new workspace skill, or "" when it can."""
    if not name:
        return "Lowercase letters, digits and hyphens, like “meeting-notes”."
    if not is_valid_name(name):
        hint = suggest_name(name)
        tip = f" Try “{hint}”." if hint and hint != name and is_valid_name(hint) else ""
        return f"Use 1–{MAX_NAME} lowercase letters, digits and single hyphens inside the name.{tip}"
    if name in taken:
        return f"Your workspace already has a skill named “{name}”."
    return ""


class NameDialog(QDialog):
    """Asks for a new skill's name and keeps OK disabled until the name follows the rules."""

    def __init__(self, taken: Collection[str], others: dict[str, str] | None = None,
                 parent: QWidget | None = None) -> None:
        """`taken`: the workspace's skill names; `others`: the other skills' names and sources ("builtin", "user"),
        which a workspace skill of the same name takes the place of."""
        super().__init__(parent)
        self.taken = set(taken)
        self.others = dict(others or {})
        self.setWindowTitle("New skill")
        self.field = QLineEdit()
        self.field.setPlaceholderText("meeting-notes")
        self.field.setMaxLength(MAX_NAME + 8)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Create")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        intro = QLabel("The name is also the folder name in your workspace's <code>skills/</code>.")
        intro.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.field)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self.field.textChanged.connect(self._check)
        self.setMinimumWidth(420)
        self._check("")

    def name(self) -> str:
        return self.field.text().strip()

    def _check(self, _text: str) -> None:
        problem = name_problem(self.name(), self.taken)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not problem)
        color = GREY if not self.name() else RED
        source = self.others.get(self.name())
        instead = "" if problem or source is None else (
            f" It is used in place of the {'built-in' if source == 'builtin' else source} “{self.name()}” skill; "
            "to change that one instead, select it and use Copy to workspace.")
        self.message.setText(f"<span style='color:{color}'>{problem}</span>" if problem else
                             f"Creates <code>skills/{self.name()}/SKILL.md</code>.{instead}")


async def ask_name(parent: QWidget, taken: Collection[str], others: dict[str, str]) -> str | None:
    dialog = NameDialog(taken, others, parent)
    accepted = await run_dialog(dialog) == QDialog.DialogCode.Accepted
    name = dialog.name()
    dialog.deleteLater()
    return name if accepted else None


async def pick_source(parent: QWidget, kind: str) -> Path | None:
    """A skill folder (kind "folder") or a .zip/.skill archive (kind "archive")."""
    dialog = QFileDialog(parent)
    if kind == "folder":
        dialog.setWindowTitle("Install a skill folder")
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
    else:
        dialog.setWindowTitle("Install a skill archive")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.setNameFilters(["Skill archives (*.zip *.skill)", "All files (*)"])
    accepted = await run_dialog(dialog) == QDialog.DialogCode.Accepted
    chosen = dialog.selectedFiles()
    dialog.deleteLater()
    return Path(chosen[0]) if accepted and chosen else None


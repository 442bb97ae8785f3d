"""The question a window asks when it is closed with changes not yet saved: Save, Discard or Cancel.

Opened with open(), never exec(): a nested event loop would stall the agent on the qasync loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from desktop.ui.plain_text import plain_box

Choice = QMessageBox.StandardButton


def ask_to_save(parent: QWidget, text: str, answered: Callable[[Choice], None]) -> QMessageBox:
    """Ask over `parent`; `answered` gets the button chosen (Cancel when the question was dismissed). `text` is
    shown as words: it may name what is edited as others named it (a skill's folder a command made)."""
    box = plain_box(QMessageBox.Icon.Question, "Save your changes?", text, Choice.Save | Choice.Discard | Choice.Cancel,
                    parent)
    box.setDefaultButton(Choice.Save)

    def finished(_result: int) -> None:
        choice = box.standardButton(box.clickedButton())
        box.deleteLater()
        answered(choice)

    box.finished.connect(finished)
    box.open()
    return box


async def asked_to_save(parent: QWidget, text: str) -> Choice:
    """ask_to_save, awaited: for a window whose closing is a coroutine."""
    answered: asyncio.Future[Choice] = asyncio.get_running_loop().create_future()

    def chosen(choice: Choice) -> None:
        if not answered.done():
            answered.set_result(choice)

    ask_to_save(parent, text, chosen)
    return await answered

"""The choice a turn's row offers when its undo would overwrite files changed since the turn (by the person, a
later turn, anything) or its memory files: which files and why, then "Undo the rest" (leave those as they are
now), "Undo anyway" (put them back too, after the core copies what they hold now to the data folder; the
outcome says where) or Cancel. "Undo anyway" overwrites only the files listed here: one that changed after the
list was shown stops the undo again, with the new list."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from desktop.checkpoints.service import REST, Choice
from desktop.checkpoints.undone import Conflict

STYLE = """
#conflictChoice { border: 1px solid #d4a017; border-radius: 8px; background: palette(base); }
#conflictWhy { color: palette(placeholder-text); }
"""
WHY = {False: "changed since this turn", True: "a memory file: never put back without asking"}


class ConflictChoice(QFrame):
    """The files to choose about and the three answers; `chosen(choice)` runs the undo, `cancelled()` hides it."""

    def __init__(self, conflicts: tuple[Conflict, ...], chosen: Callable[[Choice], None],
                 cancelled: Callable[[], None]) -> None:
        super().__init__()
        self.setObjectName("conflictChoice")
        self.setStyleSheet(STYLE)
        self.conflicts = conflicts
        count = len(conflicts)
        self.heading = QLabel(f"Undoing would overwrite {'this file' if count == 1 else f'these {count} files'}:")
        self.heading.setStyleSheet("font-weight: 600;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        self.listed = [QLabel(f"{c.path}  ·  {WHY[c.memory]}") for c in conflicts]
        for line in self.listed:
            line.setObjectName("conflictWhy")
            line.setTextFormat(Qt.TextFormat.PlainText)  # a command chose the name: never markup that loads a file
            layout.addWidget(line)
        self.rest = QPushButton("Undo the rest")
        self.rest.setToolTip("Put back the turn's other files and leave these as they are now")
        self.anyway = QPushButton("Undo anyway")
        self.anyway.setToolTip("Put these back too; what they hold now is first copied to the app's data folder")
        self.cancel = QPushButton("Cancel")
        self.rest.clicked.connect(lambda: chosen(REST))
        self.anyway.clicked.connect(lambda: chosen(Choice(overwrite=frozenset(c.path for c in conflicts))))
        self.cancel.clicked.connect(cancelled)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button in (self.cancel, self.anyway, self.rest):
            buttons.addWidget(button)
        layout.addLayout(buttons)

"""The open chat's turns that changed files, above the composer: "N files changed" under what was asked, the
files with what happened to each (each unfolds to its diff for that turn, read from the checkpoint store off
the GUI thread, tinted as every diff in the app), and "Undo these changes". What the undo did is said in the
row; files changed since the turn, and its memory files, stop it with a choice (conflicts.py). Hidden while
the chat has no such turn; the newest few show. While recording is paused (the workspace is over a cap) the
strip says so in every chat, plainly.

It follows the core's FilesChanged and ChangesUndone events; the list is the Checkpoints service's."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget
from shiboken6 import isValid

from desktop.checkpoints import Checkpoints
from desktop.checkpoints.events import ChangesUndone, FilesChanged, RecordingPaused
from desktop.checkpoints.journal import Change, TurnChanges
from desktop.checkpoints.service import ASK, Choice, UndoResult
from desktop.kernel.bus import ChatSetAside, Event
from desktop.kernel.taskset import spawn
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.checkpoints.conflicts import ConflictChoice
from desktop.ui.diff_view import DiffBox
from desktop.ui.elided_label import ElidedLabel

STYLE = """
#changesPanel { border: 1px solid palette(midlight); border-radius: 10px; background: palette(alternate-base); }
#changesHeading, #changesAsked { color: palette(placeholder-text); font-size: 11px; }
#changesCount { font-weight: 600; }
#changesOutcome[stopped="true"], #changesPaused { color: #c0392b; }
#changesFile { text-align: left; padding: 1px 4px; }
#changesDiffNote { color: palette(placeholder-text); padding-left: 18px; }
DiffBox { border: none; border-radius: 6px; background: palette(base); margin-left: 18px; }
"""
SHOWN = 3  # the newest turns shown: older ones are still undone in turn with /undo
LABEL_CHARS = 60
_VERBS = {"created": "new", "modified": "changed", "deleted": "deleted"}


class TurnRow(QWidget):
    """One turn: "N files changed", what was asked, the files (folded), Undo these changes, and its outcome."""

    def __init__(self, turn: TurnChanges, panel: ChangesPanel) -> None:
        super().__init__(panel)
        self.turn = turn
        files = turn.files
        self.count = QLabel(f"{len(files)} file{'s' if len(files) != 1 else ''} changed")
        self.count.setObjectName("changesCount")
        label = turn.label if len(turn.label) <= LABEL_CHARS else turn.label[:LABEL_CHARS] + "…"
        self.asked = ElidedLabel(f"by “{label}”")  # shortened further in a narrow chat, never widening it
        self.asked.setObjectName("changesAsked")
        self.toggle = _button("Show files", "The files this turn changed", self._toggle)
        self.undo_button = _button("Undo these changes", "Put these files back as they were before this turn",
                                   lambda: panel.undo(self))
        self.files = QWidget()
        listed = QVBoxLayout(self.files)
        listed.setContentsMargins(0, 0, 0, 2)
        listed.setSpacing(0)
        self.entries = [FileEntry(change, panel.checkpoints) for change in files]
        for entry in self.entries:
            listed.addWidget(entry)
        self.files.hide()
        self.outcome = QLabel()
        self.outcome.setObjectName("changesOutcome")
        self.outcome.setWordWrap(True)
        self.outcome.setTextFormat(Qt.TextFormat.MarkdownText)
        self.outcome.hide()
        self.choice: ConflictChoice | None = None  # while an undo waits for the person's choice
        self._panel = panel
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(6)
        top.addWidget(self.count)
        top.addWidget(self.asked, 1)
        top.addWidget(self.toggle)
        top.addWidget(self.undo_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.files)
        layout.addWidget(self.outcome)
        self._layout = layout

    def show_outcome(self, result: UndoResult) -> None:
        self.drop_choice()
        if result.conflicts:
            self.choice = ConflictChoice(result.conflicts, lambda choice: self._panel.undo(self, choice),
                                         self._cancel)
            self._layout.addWidget(self.choice)
            self.undo_button.setText("Undo these changes")
            self.outcome.hide()
            return
        self.undo_button.setEnabled(not result.undone)
        self.undo_button.setText("Undone" if result.undone else "Undo these changes")
        self.outcome.setProperty("stopped", not result.undone)
        self.outcome.setText(result.message)
        self.outcome.style().polish(self.outcome)
        self.outcome.show()

    def _cancel(self) -> None:
        self.drop_choice()
        self.undo_button.setEnabled(True)

    def drop_choice(self) -> None:
        if self.choice is not None:
            self.choice.hide()
            self.choice.deleteLater()
            self.choice = None

    def _toggle(self) -> None:
        self.files.setVisible(not self.files.isVisible())
        self.toggle.setText("Hide files" if self.files.isVisible() else "Show files")


class FileEntry(QWidget):
    """One file of a turn: what happened to it, unfolding to its diff (asked of the store the first time)."""

    def __init__(self, change: Change, checkpoints: Checkpoints) -> None:
        super().__init__()
        self.change = change
        self.checkpoints = checkpoints
        self.title = f"{_VERBS[change.verb]}: {change.path}"
        self.button = QToolButton()
        self.button.setObjectName("changesFile")
        self.button.setAutoRaise(True)
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setArrowType(Qt.ArrowType.RightArrow)
        self.button.setText(self.title)
        self.button.setToolTip("Show what this turn changed in the file")
        self.button.clicked.connect(self._toggle)
        self.unfolded = False
        self.note = QLabel("Reading the kept copies…")  # until the diff comes, then why there is none, if so
        self.note.setObjectName("changesDiffNote")
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # a link's text is a command's: never markup that loads
        self.note.setWordWrap(True)
        self.note.hide()
        self.diff: DiffBox | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(2)
        self._layout.addWidget(self.button)
        self._layout.addWidget(self.note)
        self._asked = False

    def _toggle(self) -> None:
        self.unfolded = on = not self.unfolded
        self.button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        if not self._asked and on:
            self._asked = True
            self.note.show()
            spawn(self._load())
            return
        if self.diff is not None:
            self.diff.setVisible(on)
        else:
            self.note.setVisible(on)

    async def _load(self) -> None:
        found = await self.checkpoints.diff(self.change)
        if not isValid(self):  # the row went meanwhile (another chat shown)
            return
        if found.text:
            self.diff = DiffBox(found.text, self)
            self._layout.addWidget(self.diff)
            self.note.hide()
            self.diff.setVisible(self.unfolded)
        else:
            self.note.setText(found.summary)
            self.note.setVisible(self.unfolded)


class ChangesPanel(ChatPanel):
    def __init__(self, checkpoints: Checkpoints, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.checkpoints = checkpoints
        self.setObjectName("changesPanel")
        self.setStyleSheet(STYLE)
        self.session_key = ""
        self.rows: dict[str, TurnRow] = {}
        heading = QLabel("Files changed in this chat")
        heading.setObjectName("changesHeading")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(12, 6, 8, 6)
        self._layout.setSpacing(2)
        self._layout.addWidget(heading)
        self.paused = QLabel(checkpoints.paused)
        self.paused.setTextFormat(Qt.TextFormat.PlainText)  # it may name a folder a command made: never markup
        self.paused.setObjectName("changesPaused")
        self.paused.setWordWrap(True)
        self._layout.addWidget(self.paused)
        bridge.event.connect(self._on_event)
        self.hide()

    def show_session(self, key: str) -> None:
        self.session_key = key
        self._show()

    def undo(self, row: TurnRow, choice: Choice = ASK) -> None:
        row.undo_button.setEnabled(False)
        row.undo_button.setText("Undoing…")
        if row.choice is not None:
            for button in (row.choice.rest, row.choice.anyway, row.choice.cancel):
                button.setEnabled(False)
        spawn(self._undo(row, choice))

    async def _undo(self, row: TurnRow, choice: Choice) -> None:
        result = await self.checkpoints.undo(row.turn.chat, row.turn.id, choice)
        if self.rows.get(row.turn.id) is row:
            row.show_outcome(result)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, (FilesChanged, ChangesUndone)) and event.session_key == self.session_key:
            self._show()
        elif isinstance(event, ChatSetAside) and event.session_key == self.session_key:
            self._show()
        elif isinstance(event, RecordingPaused):
            self.paused.setText(event.reason)
            self._show()

    def _show(self) -> None:
        """The chat's newest turns that changed files; an undone one stays while its row says so."""
        turns = [t for t in self.checkpoints.turns_of(self.session_key)
                 if not t.undone or t.id in self.rows][-SHOWN:][::-1]
        for turn_id in [i for i in self.rows if i not in {t.id for t in turns}]:
            self.rows.pop(turn_id).deleteLater()
        for index, turn in enumerate(turns):
            row = self.rows.get(turn.id)
            if row is None:
                row = self.rows[turn.id] = TurnRow(turn, self)
            elif turn.undone:  # undone meanwhile, by a typed /undo: offering it again could only fail
                row.drop_choice()
                row.undo_button.setEnabled(False)
                row.undo_button.setText("Undone")
            if self._layout.indexOf(row) != index + 2:  # after the heading and the pause line
                self._layout.insertWidget(index + 2, row)
        paused = bool(self.paused.text())
        self.paused.setVisible(paused)
        self.setVisible(bool(turns) or paused)


def _button(text: str, tip: str, clicked: Callable[[], None]) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.clicked.connect(clicked)
    return button

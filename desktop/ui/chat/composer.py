"""The message editor under the transcript: Enter sends, Shift+Enter breaks the line, "/" offers
the slash commands, and attached files show as removable chips."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QFocusEvent, QFontMetricsF, QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCompleter,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.agent.attachments import problem as attachment_problem

if TYPE_CHECKING:
    from desktop.ui.context.shelf import ContextShelf

MAX_LINES = 8
HINT = "Enter to send · Shift+Enter for a new line · / for commands"
BUSY_HINT = "Esc to stop the answer · Enter sends your next message after it"
CommandList = Callable[[], list[tuple[str, str]]]  # (name, summary), read fresh: features add commands later
_NAME_ROLE = Qt.ItemDataRole.UserRole + 1


class _Input(QPlainTextEdit):
    """Plain text input that grows with its content up to MAX_LINES."""

    submit = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.completer: QCompleter | None = None
        self.setAcceptDrops(False)  # files dropped here attach (the window handles the drop)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTabChangesFocus(True)
        self.setPlaceholderText("Message Nanobot…")
        self.document().setDocumentMargin(6)
        self.textChanged.connect(self.updateGeometry)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)

    def sizeHint(self) -> QSize:
        line = QFontMetricsF(self.font()).lineSpacing()
        lines = min(max(int(self.document().size().height()), 1), MAX_LINES)
        return QSize(200, int(lines * line + 2 * self.document().documentMargin() + 4))

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        _mark_focus(self.parentWidget(), True)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        _mark_focus(self.parentWidget(), False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        popup = self.completer.popup() if self.completer is not None else None
        key = event.key()
        if popup is not None and popup.isVisible() and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab,
                                                                Qt.Key.Key_Escape, Qt.Key.Key_Backtab):
            event.ignore()  # the completer takes these while its list is open
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submit.emit()
            return
        if key == Qt.Key.Key_Escape:
            event.ignore()  # the window stops the answer, or hides itself
            return
        super().keyPressEvent(event)


class Composer(QFrame):
    submitted = Signal(str, list)  # text, attached file paths
    stop_requested = Signal()

    def __init__(self, commands: CommandList, context: ContextShelf | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context  # desktop context chips and the `+` menu (desktop/ui/context)
        self.setObjectName("composer")
        self._commands = commands
        self.attachments: list[str] = []
        self._busy = False
        self._dialog: QFileDialog | None = None

        self.input = _Input(self)
        self.input.submit.connect(self.submit)
        self.input.textChanged.connect(self._complete)

        self._command_model = QStandardItemModel(self)
        self.completer = QCompleter(self._command_model, self)
        self.completer.setCompletionRole(_NAME_ROLE)
        self.completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer.setWidget(self.input)
        self._popup().setStyleSheet("QListView::item { padding: 4px 10px; }")
        self.completer.activated.connect(self._chosen_text)
        self.input.completer = self.completer

        self.chips = QHBoxLayout()
        self.chips.setContentsMargins(0, 0, 0, 0)
        self.chips.setSpacing(6)
        self.chips.addStretch(1)
        self._chip_row = QWidget(self)
        self._chip_row.setLayout(self.chips)
        self._chip_row.hide()

        self.attach_button = QToolButton(self)
        self.attach_button.setText("Attach…")
        self.attach_button.setToolTip("Attach files or images (or drop them on the window)")
        self.attach_button.setAutoRaise(True)
        self.attach_button.clicked.connect(self.choose_files)
        self.hint = QLabel(HINT, self)
        self.hint.setObjectName("hint")
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop the answer (Esc); what came so far is kept")
        self.stop_button.clicked.connect(self.stop_requested)
        self.stop_button.hide()
        self.send_button = QPushButton("Send", self)
        self.send_button.setDefault(True)
        self.send_button.clicked.connect(self.submit)

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        if context is not None:
            bar.addWidget(context.add_button(self.choose_files))
        bar.addWidget(self.attach_button)
        bar.addWidget(self.hint, 1)
        bar.addWidget(self.stop_button)
        bar.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        if context is not None:
            layout.addWidget(context)
        layout.addWidget(self._chip_row)
        layout.addWidget(self.input)
        layout.addLayout(bar)

    # -- sending

    def submit(self) -> None:
        text = _trimmed(self.input.toPlainText())
        if not text and not self.attachments and (self.context is None or self.context.empty):
            return
        files = list(self.attachments)
        if self.context is not None:
            text, captured = self.context.message(text)
            files += captured
            self.context.clear()
        self.input.clear()
        self.clear_attachments()
        self.submitted.emit(text, files)

    def set_busy(self, busy: bool) -> None:
        """While an answer runs, Stop shows and the hint line names its key; a message the hint line carries
        (a refused file, editing) stays."""
        self._busy = busy
        self.stop_button.setVisible(busy)
        if self.hint.text() in (HINT, BUSY_HINT):
            self.show_keys()

    def show_keys(self) -> None:
        """The hint line back to the keys to use now."""
        self.say(BUSY_HINT if self._busy else HINT)

    # -- attachments

    def choose_files(self) -> None:
        """A non-modal file dialog: no nested event loop on the qasync loop."""
        if self._dialog is None:
            self._dialog = QFileDialog(self, "Attach files")
            self._dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
            self._dialog.filesSelected.connect(self.add_files)
            self._dialog.finished.connect(lambda _result: self.input.setFocus())  # chosen or cancelled
        self._dialog.open()

    def add_files(self, paths: list[str]) -> None:
        """Attach each file; one that cannot be (a folder, missing, unreadable, too large) is named in the hint
        line, with why, and left out."""
        refused = []
        for path in paths:
            wrong = attachment_problem(path)
            if wrong:
                refused.append(wrong)
            elif path not in self.attachments:
                self.attachments.append(path)
                self._add_chip(path)
        self._chip_row.setVisible(bool(self.attachments))
        if refused:
            self.say(f"Not attached: {'; '.join(refused)}", error=True)
        else:
            self.show_keys()

    def say(self, text: str, error: bool = False) -> None:
        """The line under the message box: the keys to use, or what went wrong (in red)."""
        self.hint.setText(text)
        self.hint.setProperty("error", error)
        self.hint.style().unpolish(self.hint)
        self.hint.style().polish(self.hint)

    def clear_attachments(self) -> None:
        self.attachments.clear()
        while self.chips.count() > 1:  # the chips, not the stretch after them
            item = self.chips.takeAt(0)
            chip = item.widget() if item is not None else None
            if chip is not None:
                chip.deleteLater()
        self._chip_row.hide()

    def _add_chip(self, path: str) -> None:
        chip = QToolButton(self._chip_row)
        chip.setObjectName("chip")
        chip.setText(f"{Path(path).name}  ✕")
        chip.setToolTip(f"{path}\nClick to remove")
        chip.clicked.connect(lambda: self._remove(path, chip))
        self.chips.insertWidget(self.chips.count() - 1, chip)

    def _remove(self, path: str, chip: QToolButton) -> None:
        if path in self.attachments:
            self.attachments.remove(path)
        chip.deleteLater()
        self._chip_row.setVisible(bool(self.attachments))

    # -- slash-command completion

    def _complete(self) -> None:
        text = self.input.toPlainText()
        word = text.split(maxsplit=1)[0] if text.strip() else ""
        popup = self._popup()
        if not word.startswith("/") or len(text) > len(word) or text != text.lstrip():
            popup.hide()
            return
        self._fill_commands()
        self.completer.setCompletionPrefix(word)
        if self.completer.completionCount() == 0 or (self.completer.completionCount() == 1
                                                     and self.completer.currentCompletion() == word):
            popup.hide()
            return
        rect = self.input.cursorRect()
        rect.setWidth(max(popup.sizeHintForColumn(0) + 24, 280))
        self.completer.complete(rect)
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # QCompleter always makes one
        return popup

    def _fill_commands(self) -> None:
        self._command_model.clear()
        for name, summary in sorted(self._commands()):
            item = QStandardItem(f"{name}   {summary}")
            item.setData(name, _NAME_ROLE)
            item.setToolTip(summary)
            self._command_model.appendRow(item)

    def _chosen_text(self, name: str) -> None:
        self.input.setPlainText(name + " ")
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)
        self._popup().hide()


def _trimmed(text: str) -> str:
    """What is sent: blank lines and spaces at the ends go, a first line's indent stays (pasted code, a list)."""
    lines = text.rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def _mark_focus(frame: QWidget | None, on: bool) -> None:
    """The composer's frame shows where the keyboard is (its style sheet colours [focused="true"])."""
    if frame is not None:
        frame.setProperty("focused", on)
        frame.style().unpolish(frame)
        frame.style().polish(frame)

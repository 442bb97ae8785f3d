"""The message editor under the transcript: Enter sends, Shift+Enter breaks the line, "/" offers
the slash commands, and attached files show as removable chips (a picture's with its thumbnail). Ctrl+V of a
picture (a screenshot) or of copied files attaches them, and so does a long text (desktop/ui/chat/pasted.py says
how long): it reaches the model as an attached file, inline up to the attachments' cap, and the chip shows it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QMimeData, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QFocusEvent,
    QFontMetricsF,
    QImage,
    QKeyEvent,
    QPixmap,
    QStandardItem,
    QStandardItemModel,
)
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
from shiboken6 import isValid

from desktop.agent.attachments import is_image, pdf_pages
from desktop.agent.attachments import problem as attachment_problem
from desktop.kernel.taskset import spawn
from desktop.ui.chat import pasted
from desktop.ui.chat.thumbnails import Thumbnails
from desktop.ui.elided_label import ElidedLabel
from desktop.ui.plain_text import plain_tip

if TYPE_CHECKING:
    from desktop.ui.context.shelf import ContextShelf
    from desktop.ui.voice.dictate import Dictate

MAX_LINES = 8
CHIP_PICTURE = 36  # px: the height of a picture's thumbnail in its chip
DROP_HINT = "Drop to attach"
HINT = "Enter to send · Shift+Enter for a new line · / for commands"
BUSY_HINT = "Esc to stop the answer · Enter sends your next message after it"
POPUP_MARGIN = 8  # pixels the command list keeps from the window's edges
CommandList = Callable[[], list[tuple[str, str]]]  # (name, summary), read fresh: features add commands later
_NAME_ROLE = Qt.ItemDataRole.UserRole + 1
_SUMMARY_ROLE = Qt.ItemDataRole.UserRole + 2  # as written: the tooltip holds it made safe to show


@dataclass(frozen=True)
class Draft:
    """A message being written, set aside while the box holds something else (a question being edited)."""

    text: str
    files: list[str]
    sent_as: dict[str, str]  # attached path -> the name it was first sent by
    pasted_texts: dict[str, str]  # attached path -> the long text pasted


class _Input(QPlainTextEdit):
    """Plain text input that grows with its content up to MAX_LINES."""

    submit = Signal()
    pasted_files = Signal(list)  # local paths copied in a file manager
    pasted_image = Signal(QImage)  # a screenshot, or a picture copied from an app
    pasted_long_text = Signal(str)  # a log, a document: attached instead of typed in

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

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return source.hasImage() or source.hasUrls() or super().canInsertFromMimeData(source)

    def insertFromMimeData(self, source: QMimeData) -> None:
        """Copied files, pictures and long texts attach; a few lines of text are typed in."""
        found = pasted.attachable(source)
        if isinstance(found, list):
            self.pasted_files.emit(found)
        elif isinstance(found, QImage):
            self.pasted_image.emit(found)
        elif found is not None:
            self.pasted_long_text.emit(found)
        else:
            super().insertFromMimeData(source)

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
    submitted = Signal(str, list, dict)  # text, attached file paths, the names files were first sent by
    stop_requested = Signal()

    def __init__(self, commands: CommandList, thumbnails: Thumbnails, pasted_dir: Path,
                 context: ContextShelf | None = None, dictate: Dictate | None = None,
                 parent: QWidget | None = None) -> None:
        """`pasted_dir`: where pasted pictures are kept as files (home.pasted_dir, in the data folder)."""
        super().__init__(parent)
        self.context = context  # desktop context chips and the `+` menu (desktop/ui/context)
        self.dictate = dictate  # the microphone button and its strip (desktop/ui/voice)
        self.setObjectName("composer")
        self._commands = commands
        self._thumbnails = thumbnails
        self._pasted_dir = pasted_dir
        self.attachments: list[str] = []
        self._sent_as: dict[str, str] = {}  # attached path -> the name it was first sent by (an edited message's)
        self._busy = False
        # Said in place of the keys while it holds (an edit's: what Enter does with it, desktop/ui/chat/editing.py),
        # so whatever puts the keys back (a file attached, a drag ended) keeps it.
        self.standing = ""
        self._dialog: QFileDialog | None = None

        self.input = _Input(self)
        self.input.submit.connect(self.submit)
        self.input.pasted_files.connect(self.add_files)
        self.input.pasted_image.connect(lambda image: spawn(self.paste_image(image)))
        self.input.pasted_long_text.connect(lambda text: spawn(self.paste_text(text)))
        self._pasted_texts: dict[str, str] = {}  # attached path -> the text pasted, for its chip and preview
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
        self.preview = QPlainTextEdit(self)  # a pasted text's chip opens it here, to read before sending
        self.preview.setObjectName("preview")
        self.preview.setReadOnly(True)
        self.preview.setMaximumHeight(180)
        self.preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.preview.hide()

        self.attach_button = QToolButton(self)
        self.attach_button.setText("Attach…")
        self.attach_button.setToolTip("Attach files or images (or drop them on the window)")
        self.attach_button.setAutoRaise(True)
        self.attach_button.clicked.connect(self.choose_files)
        # Ends in "…" in a narrow window (a column open beside the chat) rather than setting the window's narrowest
        # width, wrapping to six lines or being cut mid-word; the whole line is then its tooltip.
        self.hint = ElidedLabel(HINT, self)
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
        if dictate is not None:
            bar.addWidget(dictate.button)
            dictate.heard.connect(self._dictated)
        bar.addWidget(self.attach_button)
        bar.addWidget(self.hint, 1)
        bar.addWidget(self.stop_button)
        bar.addWidget(self.send_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        if context is not None:
            layout.addWidget(context)
        if dictate is not None:
            layout.addWidget(dictate.bar)
        layout.addWidget(self._chip_row)
        layout.addWidget(self.preview)
        layout.addWidget(self.input)
        layout.addLayout(bar)

    # -- sending

    def submit(self) -> None:
        text = _trimmed(self.input.toPlainText())
        if not text and not self.attachments and (self.context is None or self.context.empty):
            return
        if self.context is not None and self.context.read_first(self.submit):
            return  # sent once what is read when sent (an MCP resource) has been
        files = list(self.attachments)
        names = {path: self._sent_as[path] for path in files if path in self._sent_as}
        if self.context is not None:
            text, captured = self.context.message(text)
            files += captured
            self.context.clear()
        self.input.clear()
        self.clear_attachments()
        self.submitted.emit(text, files, names)

    def _dictated(self, text: str, send: bool) -> None:
        """What was said lands where the cursor is, to edit before sending; or is sent at once."""
        cursor = self.input.textCursor()
        before = self.input.toPlainText()[:cursor.position()]
        cursor.insertText(text if not before or before[-1].isspace() else f" {text}")
        self.input.setTextCursor(cursor)
        self.input.setFocus()
        if send:
            self.submit()

    def set_busy(self, busy: bool) -> None:
        """While an answer runs, Stop shows and the hint line names its key; a message the hint line carries
        (a refused file, editing) stays."""
        self._busy = busy
        self.stop_button.setVisible(busy)
        if self.hint.text() in (HINT, BUSY_HINT):
            self.show_keys()

    def show_keys(self) -> None:
        """The hint line back to the keys to use now: what stands (an edit's), else the ordinary ones."""
        self.say(self.standing or (BUSY_HINT if self._busy else HINT))

    # -- attachments

    def choose_files(self) -> None:
        """A non-modal file dialog (no nested event loop on the qasync loop), opening in the home folder and then,
        for the rest of the run, in the folder last chosen from."""
        if self._dialog is None:
            self._dialog = QFileDialog(self, "Attach files", str(Path.home()))
            self._dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
            self._dialog.filesSelected.connect(self.add_files)
            self._dialog.finished.connect(lambda _result: self.input.setFocus())  # chosen or cancelled
        self._dialog.open()

    def add_files(self, paths: list[str], names: Mapping[str, str] | None = None) -> None:
        """Attach each file; one that cannot be (a folder, missing, unreadable, too large) is named in the hint
        line, with why, and left out. `names`: what files were first sent by (an edited message's workspace
        copies), shown on their chips and sent with them."""
        refused = []
        for path in paths:
            wrong = attachment_problem(path)
            if wrong:
                refused.append(wrong)
            elif path not in self.attachments:
                self.attachments.append(path)
                if names and names.get(path):
                    self._sent_as[path] = names[path]
                self._add_chip(path)
        self._chip_row.setVisible(bool(self.attachments))
        if refused:
            self.say(f"Not attached: {'; '.join(refused)}", error=True)
        else:
            self.show_keys()

    async def paste_image(self, image: QImage) -> None:
        """A pasted picture, kept as a PNG in the data folder (written in a thread) and attached."""
        try:
            path = await asyncio.to_thread(pasted.save_image, image, self._pasted_dir)
        except OSError as exc:
            self.say(f"The pasted picture could not be kept: {exc.strerror or exc}", error=True)
            return
        self.add_files([str(path)])

    async def paste_text(self, text: str) -> None:
        """A long pasted text, kept as a file in the data folder and attached as "Pasted text, N lines"."""
        try:
            path = await asyncio.to_thread(pasted.save_text, text, self._pasted_dir)
        except OSError as exc:
            self.say(f"The pasted text could not be kept, so it was typed in: {exc.strerror or exc}", error=True)
            self.input.insertPlainText(text)
            return
        self._pasted_texts[str(path)] = text
        self.add_files([str(path)])

    def show_drop_target(self, on: bool) -> None:
        """Files dragged over the window: the message box lights up and says a drop attaches them."""
        self.setProperty("dropping", on)
        self.style().unpolish(self)
        self.style().polish(self)
        if on:
            self.say(DROP_HINT)
        elif self.hint.text() == DROP_HINT:
            self.show_keys()

    def say(self, text: str, error: bool = False) -> None:
        """The line under the message box: the keys to use, or what went wrong (in red)."""
        self.hint.setText(text)
        self.hint.setProperty("error", error)
        self.hint.style().unpolish(self.hint)
        self.hint.style().polish(self.hint)

    def take_draft(self) -> Draft:
        """What is written and attached, taken out of the box (which is left empty) to be put back later."""
        draft = Draft(self.input.toPlainText(), list(self.attachments), dict(self._sent_as), dict(self._pasted_texts))
        self.input.clear()
        self.clear_attachments()
        return draft

    def put_back(self, draft: Draft) -> None:
        """A draft taken out with take_draft, in place of what the box holds."""
        self.clear_attachments()
        self.input.setPlainText(draft.text)
        self.input.moveCursor(self.input.textCursor().MoveOperation.End)
        self._pasted_texts.update(draft.pasted_texts)
        self.add_files(draft.files, draft.sent_as)

    def clear_attachments(self) -> None:
        self.attachments.clear()
        self._sent_as.clear()
        self._pasted_texts.clear()
        self.preview.hide()
        while self.chips.count() > 1:  # the chips, not the stretch after them
            item = self.chips.takeAt(0)
            chip = item.widget() if item is not None else None
            if chip is not None:
                chip.deleteLater()
        self._chip_row.hide()

    def _add_chip(self, path: str) -> None:
        text = self._pasted_texts.get(path)
        if text is None:
            chip = _Chip(path, self._thumbnails, self._chip_row, self._sent_as.get(path, ""))
        else:
            chip = _Chip(path, self._thumbnails, self._chip_row, pasted.text_label(text),
                         lambda: self._toggle_preview(text))
        chip.remove_button.clicked.connect(lambda: self._remove(path, chip))
        self.chips.insertWidget(self.chips.count() - 1, chip)

    def _toggle_preview(self, text: str) -> None:
        showing = self.preview.isVisible() and self.preview.toPlainText() == text
        if not showing:
            self.preview.setPlainText(text)
        self.preview.setVisible(not showing)

    def _remove(self, path: str, chip: QWidget) -> None:
        text = self._pasted_texts.pop(path, None)
        if text is not None and self.preview.toPlainText() == text:
            self.preview.hide()
        if path in self.attachments:
            self.attachments.remove(path)
        self._sent_as.pop(path, None)
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
        self.completer.complete(self._popup_rect(popup))
        popup.setCurrentIndex(self.completer.completionModel().index(0, 0))

    def _popup_rect(self, popup: QAbstractItemView) -> QRect:
        """Where the list opens (in the message box's coordinates): under the cursor, as wide as its lines but
        never past the window's edges; a line too long for that ends in "…" (its tooltip has it whole)."""
        window = self.window()
        margin = POPUP_MARGIN
        window_left = self.input.mapFrom(window, QPoint(0, 0)).x()
        room = max(window.width() - 2 * margin, 200)
        width = min(max(popup.sizeHintForColumn(0) + 24, 280), room)
        chrome = 2 * 10 + popup.verticalScrollBar().sizeHint().width() + 2 * popup.frameWidth() + 4  # padding
        metrics = popup.fontMetrics()
        for row in range(self._command_model.rowCount()):
            item = self._command_model.item(row)
            whole = f"{item.data(_NAME_ROLE)}   {item.data(_SUMMARY_ROLE)}"
            item.setText(metrics.elidedText(whole, Qt.TextElideMode.ElideRight, width - chrome))
        cursor = self.input.cursorRect()
        left = min(max(cursor.x(), window_left + margin), window_left + margin + room - width)
        return QRect(left, cursor.y(), width, cursor.height())

    def _popup(self) -> QAbstractItemView:
        popup = self.completer.popup()
        assert popup is not None  # QCompleter always makes one
        return popup

    def _fill_commands(self) -> None:
        self._command_model.clear()
        for name, summary in sorted(self._commands()):
            item = QStandardItem(f"{name}   {summary}")
            item.setData(name, _NAME_ROLE)
            item.setData(summary, _SUMMARY_ROLE)
            item.setToolTip(plain_tip(summary))  # an MCP server describes its prompts, offered here as commands
            self._command_model.appendRow(item)

    def _chosen_text(self, name: str) -> None:
        self.input.setPlainText(name + " ")
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)
        self._popup().hide()


class _Chip(QFrame):
    """One attached file: a picture's thumbnail, its name (the file's, or `label`: the name it was first sent by;
    a pasted text's label is a button that calls `open_text`), and ✕ to take it off the message."""

    def __init__(self, path: str, thumbnails: Thumbnails, parent: QWidget, label: str = "",
                 open_text: Callable[[], None] | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chip")
        self.setToolTip(plain_tip(path))  # the whole path: a command in the sandbox may have named its folders
        self.path = path
        self._label = label or Path(path).name
        self._thumbnails = thumbnails
        self.picture = QLabel(self)
        self.picture.hide()
        self.name: QWidget
        if open_text is None:
            self.name = QLabel(self)
            self.name.setTextFormat(Qt.TextFormat.PlainText)  # a file's name, as whatever made it chose it
            self.name.setText(self._label)
        else:
            button = QToolButton(self)
            button.setText(f"{label}  ▾")
            button.setAutoRaise(True)
            button.setToolTip("Show or hide the text")
            button.clicked.connect(open_text)
            self.name = button
        self.remove_button = QToolButton(self)
        self.remove_button.setText("✕")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip("Remove")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 2, 2)
        layout.setSpacing(6)
        layout.addWidget(self.picture)
        layout.addWidget(self.name)
        layout.addWidget(self.remove_button)
        if is_image(path):
            thumbnails.ready.connect(self._show_picture)
            self._show_picture()
        elif isinstance(self.name, QLabel) and Path(path).suffix.lower() == ".pdf":
            spawn(self._count_pages(thumbnails.workspace))

    async def _count_pages(self, workspace: Path) -> None:
        """A PDF's page count (or why its text cannot be read) beside its name, read off the GUI thread."""
        said = await asyncio.to_thread(pdf_pages, self.path, workspace)
        if said is not None and isValid(self.name) and isinstance(self.name, QLabel):
            self.name.setText(f"{self._label} · {said}")

    def _show_picture(self) -> None:
        image = self._thumbnails.get(self.path)
        if image is not None:
            self.picture.setPixmap(QPixmap.fromImage(image).scaledToHeight(
                CHIP_PICTURE, Qt.TransformationMode.SmoothTransformation))
            self.picture.show()


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

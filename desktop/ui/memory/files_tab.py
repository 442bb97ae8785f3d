"""The Memory tab: MEMORY.md, USER.md and SOUL.md, rendered or edited. A save is atomic and recorded
in the memory history (so it can be undone); changes made on disk by others show up by themselves.
The files are read and written through desktop.workspace.access: one that became a link out of the workspace
(or a pipe, or too big) is not shown, and the tab says why."""

from __future__ import annotations

import asyncio
import html
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.memory.hand_edit import TooLarge, save_by_hand
from desktop.ui.bridge import CoreBridge
from desktop.ui.links import open_link
from desktop.ui.markdown import MarkdownBrowser
from desktop.ui.memory.changed_meanwhile import LOAD_THEIRS, changed_meanwhile, held_back_note
from desktop.ui.skills.details import Notice
from desktop.ui.skills.model import AMBER, GREEN, RED
from desktop.workspace import access
from desktop.workspace.layout import MEMORY_FILE, TEXT_FILE_LIMIT

# (label in the list, path relative to the workspace)
FILES = (("MEMORY.md — long-term facts", MEMORY_FILE),
         ("USER.md — about you", "USER.md"),
         ("SOUL.md — the assistant's manner", "SOUL.md"))
RELOAD_DELAY_MS = 200


def _read_all(workspace: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Every file's text, and why a file was not read (for those that may not be)."""
    texts, refused = {}, {}
    for _, name in FILES:
        texts[name], why = access.load_text(workspace, name, TEXT_FILE_LIMIT)
        if why:
            refused[name] = why
    return texts, refused


class MemoryFilesTab(QWidget):
    saved = Signal(str)  # workspace-relative path, after a save was written and recorded

    def __init__(self, memory: Memory, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory = memory
        self.bridge = bridge  # the workspace in force
        self.current = FILES[0][1]
        self._disk: dict[str, str] = {}  # what each file held when last read or saved
        self._on_disk_now: dict[str, str] | None = None  # newer disk contents held back while editing
        self._refused: dict[str, str] = {}  # why a file was not read, by name
        self._showing_refusal = False
        self._editing = False

        self.files = QListView()
        self.files.setModel(QStringListModel([label for label, _ in FILES], self))
        self.files.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.files.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files.setFixedWidth(max(self.fontMetrics().horizontalAdvance(label) for label, _ in FILES) + 24)
        self.view = MarkdownBrowser()
        self.view.anchorClicked.connect(lambda url: open_link(url, self.bridge.workspace))
        self.editor = QPlainTextEdit()
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.editor.setFont(mono)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.editor)
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.edit_button = QPushButton("Edit")
        self.save_button = QPushButton("Save")
        self.cancel_button = QPushButton("Cancel")
        self.notice = Notice()
        self.load_theirs = QPushButton(LOAD_THEIRS)
        self.load_theirs.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.title, 1)
        for button in (self.load_theirs, self.edit_button, self.cancel_button, self.save_button):
            buttons.addWidget(button)
        right = QVBoxLayout()
        right.addLayout(buttons)
        right.addWidget(self.notice)
        right.addWidget(self.stack, 1)
        layout = QHBoxLayout(self)
        layout.addWidget(self.files)
        layout.addLayout(right, 1)

        self.watcher = QFileSystemWatcher(self)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(RELOAD_DELAY_MS)
        self._reload_timer.timeout.connect(lambda: spawn(self.reload()))
        self.watcher.fileChanged.connect(lambda _p: self._reload_timer.start())
        self.watcher.directoryChanged.connect(lambda _p: self._reload_timer.start())
        self.files.selectionModel().currentRowChanged.connect(lambda index, _prev: self._pick(index.row()))
        self.edit_button.clicked.connect(self.start_editing)
        self.cancel_button.clicked.connect(self.stop_editing)
        self.save_button.clicked.connect(lambda: spawn(self.save()))
        self.load_theirs.clicked.connect(self._take_disk_version)
        QShortcut(QKeySequence.StandardKey.Save, self.editor).activated.connect(lambda: spawn(self.save()))
        self.files.setCurrentIndex(self.files.model().index(0, 0))
        self._show_mode()

    def path(self, name: str | None = None) -> Path:
        return self.bridge.workspace / (name or self.current)

    @property
    def dirty(self) -> bool:
        return self._editing and self.editor.toPlainText() != self._disk.get(self.current, "")

    async def reload(self) -> None:
        """Read the files again; show the current one unless the user has unsaved edits of it."""
        workspace = self.bridge.workspace
        texts, self._refused = await asyncio.to_thread(_read_all, workspace)
        present = await asyncio.to_thread(
            lambda: [name for _, name in FILES if access.kind(workspace, name) == "file"])
        self._watch(workspace, present)
        changed = texts.get(self.current) != self._disk.get(self.current)
        if self.dirty and changed:
            self._hold_back(texts)
            return
        self._disk, self._on_disk_now = texts, None
        if changed or not self._editing:
            self._render()

    def start_editing(self) -> None:
        self._editing = True
        self.editor.setPlainText(self._disk.get(self.current, ""))
        self._show_mode()
        self.editor.setFocus()

    def stop_editing(self) -> None:
        self._catch_up()  # edits dropped: what was held back while they were typed is what the file holds
        self._editing = False
        self.load_theirs.hide()
        self.notice.hide()
        self._render()
        self._show_mode()

    async def save(self) -> bool:
        if not self._editing:
            return False
        name, text = self.current, self.editor.toPlainText()
        if self._on_disk_now is None:  # not yet told of a change: one the watcher has not reported is looked for
            texts, _ = await asyncio.to_thread(_read_all, self.bridge.workspace)
            if changed_meanwhile(texts.get(name), self._disk.get(name), text):
                self._hold_back(texts)
                return False
        try:
            edit = await save_by_hand(self.memory.git, self.bridge.workspace, name, text)
        except OSError as exc:
            self.notice.show_html(RED, f"Could not save {name}: {exc.strerror or exc}. Your text is still here.")
            return False
        except TooLarge as exc:
            self.notice.show_html(RED, f"Not saved: {html.escape(str(exc))}. Your text is still here.")
            return False
        self._catch_up()
        self._disk[name] = text
        self.load_theirs.hide()
        typed_on = self.editor.toPlainText() != text  # typed while the save was written: kept, to save next
        if not typed_on:
            self._editing = False
            self._render()
            self._show_mode()
        unsaved = " What you typed since is not saved yet." if typed_on else ""
        if edit.problem:
            self.notice.show_html(AMBER, f"Saved {name}, but {html.escape(edit.problem)}{unsaved}")
        else:
            note = f" (change {edit.rev[:7]}, undoable in Changes)" if edit.rev else ""
            self.notice.show_html(AMBER if typed_on else GREEN, f"Saved {name}{note}.{unsaved}")
        self.saved.emit(name)
        return True

    def _pick(self, row: int) -> None:
        if row < 0 or FILES[row][1] == self.current:
            return
        if self.dirty:  # never lose typing: stay on the file being edited
            self.notice.show_html(AMBER, f"Save or cancel your edits of {self.current} first.")
            index = next(i for i, (_, n) in enumerate(FILES) if n == self.current)
            self.files.setCurrentIndex(self.files.model().index(index, 0))
            return
        self.current = FILES[row][1]
        self._catch_up()
        self._editing = False
        self.notice.hide()
        self._render()
        self._show_mode()

    def _render(self) -> None:
        text = self._disk.get(self.current, "")
        self.title.setText(f"<b>{self.current}</b>  <span style='color:gray'>{self.path()}</span>")
        refused = self._refused.get(self.current)
        if refused:
            self.notice.show_html(RED, f"{html.escape(refused)}. Nothing of it is shown here or given to the "
                                       "assistant; replace it with a plain file to use it again.")
        elif self._showing_refusal:
            self.notice.hide()
        self._showing_refusal = bool(refused)
        if self._editing:
            self.editor.setPlainText(text)
        else:
            self.view.setMarkdown("*Not shown.*" if refused else text or "*This file is empty.*")
        self.edit_button.setEnabled(not refused)

    def _show_mode(self) -> None:
        self.stack.setCurrentWidget(self.editor if self._editing else self.view)
        self.edit_button.setVisible(not self._editing)
        self.save_button.setVisible(self._editing)
        self.cancel_button.setVisible(self._editing)

    def _hold_back(self, texts: dict[str, str]) -> None:
        """The file being edited changed on disk: keep the typing, say so, and hold the new contents for Cancel
        and "Load the version on disk". A Save after this, knowingly, replaces that version."""
        self._on_disk_now = texts
        self.notice.show_html(AMBER, html.escape(held_back_note(self.current, "this window")))
        self.load_theirs.show()

    def _catch_up(self) -> None:
        """Adopt the disk contents held back while the person typed, so what shows next is the file as it is."""
        if self._on_disk_now is not None:
            self._disk, self._on_disk_now = self._on_disk_now, None

    def _take_disk_version(self) -> None:
        self._catch_up()
        self.load_theirs.hide()
        self.notice.hide()
        self.editor.setPlainText(self._disk.get(self.current, ""))

    def _watch(self, workspace: Path, present: list[str]) -> None:
        """Atomic writes replace files, which drops them from the watcher: re-add every time."""
        wanted = [str(workspace / name) for name in present]
        wanted += [str(workspace), str(workspace / "memory")]
        missing = [p for p in wanted if p not in self.watcher.files() + self.watcher.directories()]
        if missing:
            self.watcher.addPaths(missing)

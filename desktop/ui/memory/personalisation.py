"""Settings → Personalisation: "custom instructions" where people look for them. USER.md (what the assistant
should know about you) and SOUL.md (how it should behave) are the same files the memory window shows and Dream
keeps up to date; a save here goes the memory's one way (desktop/memory/hand_edit.py), into the same history.

Nothing typed here is lost: a file that changed on disk since it was read here (Dream, the memory window, an
editor) is not overwritten unseen; the page says so, keeps the typing and offers what the memory window does
(desktop/ui/memory/changed_meanwhile.py): Save again to replace that version, or load it."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.memory.hand_edit import TooLarge, save_by_hand
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import ERROR_COLOUR, OK_COLOUR, WARN_COLOUR, heading, note_label, set_note
from desktop.ui.memory.changed_meanwhile import LOAD_THEIRS, changed_meanwhile, held_back_note
from desktop.workspace import access
from desktop.workspace.layout import TEXT_FILE_LIMIT

# (file, heading, what it is for, an example placeholder)
FILES = (("USER.md", "About you",
          "What the assistant should know about you: your name, work, where you live, what you care about, how you "
          "like answers (short, with sources, in British English…).",
          "I'm Sam, a nurse in Leeds. Keep answers short and use metric units."),
         ("SOUL.md", "How the assistant behaves",
          "Its manner and principles: tone, how much it asks before acting, what it should never do.",
          "Be direct and warm. Ask before deleting anything. Never guess at medical facts."))


class PersonalisationPage(QWidget):
    def __init__(self, memory: Memory, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._memory = memory
        self._bridge = bridge
        self._read: dict[str, str] = {}  # each file as it was when read here
        self._on_disk_now: dict[str, str] = {}  # newer versions on disk the person was told of, kept from the editor
        self.editors: dict[str, QPlainTextEdit] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for name, title, purpose, example in FILES:
            layout.addWidget(heading(f"{title}  ({name})"))
            layout.addWidget(note_label(purpose))
            editor = QPlainTextEdit()
            editor.setPlaceholderText(example)
            editor.setTabChangesFocus(True)
            editor.setReadOnly(True)  # until the file is read: typing before then would be replaced by it
            self.editors[name] = editor
            layout.addWidget(editor, 1)
        self.status = note_label()
        self.status.setMinimumHeight(self.status.fontMetrics().lineSpacing() * 2)  # room for a message: nothing jumps
        self.reload_button = QPushButton("Reload from disk")
        self.reload_button.setToolTip("Show the files as they are now (your unsaved typing here is replaced)")
        self.reload_button.clicked.connect(lambda: spawn(self.load()))
        self.save_button = QPushButton("Save instructions")
        self.save_button.clicked.connect(lambda: spawn(self.save()))
        self.load_theirs = QPushButton(LOAD_THEIRS)
        self.load_theirs.setToolTip("Replace your text here with the file's newer version")
        self.load_theirs.clicked.connect(self._take_disk_versions)
        self.load_theirs.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.load_theirs)
        buttons.addWidget(self.reload_button)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)
        spawn(self.load())

    async def load(self) -> None:
        texts = await asyncio.to_thread(self._read_files)
        problems = []
        self._on_disk_now.clear()  # every file shown as it is now
        self.load_theirs.hide()
        for name, (text, refused) in texts.items():  # one that may not be read leaves the other editable
            self._read[name] = text
            self.editors[name].setPlainText(text)
            self.editors[name].setReadOnly(bool(refused))
            if refused:
                problems.append(f"{refused}. Replace it with a plain file to edit it here.")
        set_note(self.status, " ".join(problems), ERROR_COLOUR if problems else None)

    def unsaved(self) -> list[str]:
        """The files typed in here and not saved, by their headings (the Settings window asks before closing)."""
        return [f"{title} ({name})" for name, title, *_ in FILES
                if not self.editors[name].isReadOnly() and self.editors[name].toPlainText() != self._read.get(name)]

    async def save(self) -> bool:
        """Save each file whose text was changed here, unless it changed on disk meanwhile to a version not yet
        told of; False when one was not saved (the page says why and keeps the text). Once told, a Save replaces
        that version (the memory history keeps it, when recorded)."""
        now = await asyncio.to_thread(self._read_files)
        saved, said = [], []
        for name, editor in self.editors.items():
            text = editor.toPlainText()
            if text == self._read.get(name) or editor.isReadOnly():
                continue
            if changed_meanwhile(now[name][0], self._on_disk_now.get(name, self._read.get(name)), text):
                self._on_disk_now[name] = now[name][0]
                set_note(self.status, held_back_note(name, "this page"), WARN_COLOUR)
                self.load_theirs.show()
                return False
            try:
                edit = await save_by_hand(self._memory.git, self._bridge.workspace, name, text)
            except OSError as exc:
                set_note(self.status, f"Could not save {name}: {exc.strerror or exc}. Your text is still here.",
                         ERROR_COLOUR)
                return False
            except TooLarge as exc:
                set_note(self.status, f"Not saved: {exc}. Your text is still here.", ERROR_COLOUR)
                return False
            self._read[name] = text
            self._on_disk_now.pop(name, None)
            self.load_theirs.setVisible(bool(self._on_disk_now))
            saved.append(name)
            if edit.problem:
                said.append(f"{name}: {edit.problem}")
        if not saved:
            set_note(self.status, "Nothing to save: the files are as shown.", None)
        elif said:
            set_note(self.status, f"Saved {' and '.join(saved)}, but " + "; ".join(said), WARN_COLOUR)
        else:
            set_note(self.status, f"Saved {' and '.join(saved)}; the assistant uses it from the next message.",
                     OK_COLOUR)
        return True

    def _take_disk_versions(self) -> None:
        """Load the version on disk: the newer versions told of replace the typing in their editors."""
        for name, text in self._on_disk_now.items():
            self._read[name] = text
            self.editors[name].setPlainText(text)
        self._on_disk_now.clear()
        self.load_theirs.hide()
        set_note(self.status, "", None)

    def _read_files(self) -> dict[str, tuple[str, str]]:
        workspace = self._bridge.workspace
        return {name: access.load_text(workspace, name, TEXT_FILE_LIMIT) for name, *_ in FILES}



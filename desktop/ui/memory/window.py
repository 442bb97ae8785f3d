"""The memory & history viewer: the memory files, their change history, the archived conversation
history and the chat sessions, one tab each. Tabs load when first shown and refresh when shown again."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import QMessageBox, QTabWidget, QVBoxLayout, QWidget

from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.ui.bridge import CoreBridge
from desktop.ui.memory.changes_tab import ChangesTab
from desktop.ui.memory.files_tab import MemoryFilesTab
from desktop.ui.memory.history_tab import HistoryTab
from desktop.ui.memory.sessions_tab import SessionsTab
from desktop.ui.save_question import Choice, ask_to_save


class MemoryWindow(QWidget):
    open_session = Signal(str)  # "Open in chat" on the Sessions tab: the app shows that chat

    def __init__(self, memory: Memory, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        """`memory` holds the files, their history and the archive; `bridge` the chats and the workspace."""
        super().__init__(parent)
        self.setWindowTitle("Memory")
        self.resize(1040, 700)
        self.memory = MemoryFilesTab(memory, bridge)
        self.changes = ChangesTab(memory)
        self.history = HistoryTab(memory, bridge)
        self.sessions = SessionsTab(bridge)
        self.tabs = QTabWidget()
        self.tabs.addTab(self.memory, "Memory")
        self.tabs.addTab(self.changes, "Changes")
        self.tabs.addTab(self.history, "History")
        self.tabs.addTab(self.sessions, "Sessions")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        self.sessions.open_session.connect(self.open_session)
        self.memory.saved.connect(lambda _name: spawn(self.changes.load()))
        self.changes.restored.connect(lambda _rev: spawn(self.memory.reload()))
        self.tabs.currentChanged.connect(lambda _i: self._refresh_current())
        self._commit_to_show: str | None = None
        self._asking: QMessageBox | None = None  # "Save your changes?" while it is open

    def show_commit(self, rev: str | None = None) -> None:
        """Bring the window up on the Changes tab, showing `rev` (the newest change when None)."""
        self._commit_to_show = rev
        was_visible = self.isVisible()
        self.tabs.blockSignals(True)  # one refresh below, not one per step
        self.tabs.setCurrentWidget(self.changes)
        self.tabs.blockSignals(False)
        self.show()  # a first show refreshes through showEvent
        self.raise_()
        self.activateWindow()
        if was_visible:
            self._refresh_current()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            self._refresh_current()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Closing (Esc, the title bar) with a memory file's edits unsaved asks first: they are never left in a
        hidden window that quitting drops."""
        if not self.memory.dirty:
            super().closeEvent(event)
            return
        event.ignore()
        if self._asking is None:
            self._asking = ask_to_save(self, f"Your edits of {self.memory.current} are not saved yet.",
                                       self._close_answered)

    def _close_answered(self, answer: Choice) -> None:
        self._asking = None
        if answer == Choice.Save:
            spawn(self._save_and_close())
        elif answer == Choice.Discard:
            self.memory.stop_editing()
            self.hide()

    async def _save_and_close(self) -> None:
        if await self.memory.save() and not self.memory.dirty:  # else the tab says why (a failure, or typing
            self.hide()                                          # since), and the window stays with the edits

    def _refresh_current(self) -> None:
        if not self.isVisible():
            return
        tab = self.tabs.currentWidget()
        if tab is self.memory:
            spawn(self.memory.reload())
        elif tab is self.changes:
            rev, self._commit_to_show = self._commit_to_show, None
            spawn(self.changes.load(rev))
        elif tab is self.history:
            spawn(self.history.refresh())
        elif tab is self.sessions:
            spawn(self.sessions.load())

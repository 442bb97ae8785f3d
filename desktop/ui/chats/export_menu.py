"""Export in the chat's header: the chat shown as Markdown, as one HTML page, or as a PDF (Qt's PDF writer
printing that page). A strip with nothing of its own to show above the composer: it only follows which chat
the window shows and puts its menu button in the header. The file is chosen in a save dialog (which asks
before replacing a file; it suggests the chat's title as the name) and written atomically off the GUI thread.
The dialog and a failure's message are opened and awaited (run_dialog), never exec()'d: a nested event loop
would stall the agent on the qasync loop while they are open."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QPageSize, QPdfWriter, QTextDocument
from PySide6.QtWidgets import QDialog, QFileDialog, QMenu, QMessageBox, QPushButton, QWidget

from desktop.chats import ChatExport
from desktop.kernel.atomic import atomic_write_bytes, atomic_write_text
from desktop.kernel.taskset import spawn
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.skills.dialogs import run_dialog

FORMATS = {"md": ("Markdown…", "Markdown (*.md)"), "html": ("HTML page…", "HTML page (*.html)"),
           "pdf": ("PDF…", "PDF (*.pdf)")}


class ExportMenu(ChatPanel):
    def __init__(self, chats: ChatExport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.chats = chats
        self.session_key = ""
        # A push button: it keeps room for its menu arrow beside the word (a tool button draws it over the "t").
        self.button = QPushButton("Export")
        self.button.setToolTip("Save this chat as a file")
        menu = QMenu(self.button)
        for fmt, (label, _) in FORMATS.items():
            menu.addAction(label).triggered.connect(partial(self.ask, fmt))
        menu.addSeparator()
        menu.addAction("All chats as a zip…").triggered.connect(self.ask_archive)
        self.button.setMenu(menu)
        self.button.setEnabled(False)
        self.hide()

    def show_session(self, key: str) -> None:
        self.session_key = key
        self.button.setEnabled(bool(key))

    def header_widget(self) -> QWidget:
        return self.button

    def ask(self, fmt: str, _checked: bool = False) -> None:
        """Ask where, then export the chat shown there."""
        spawn(self._ask(fmt, self.session_key))

    async def _ask(self, fmt: str, key: str) -> None:
        name = await self.chats.file_name(key, fmt)
        path = await self._pick("Export chat", name, FORMATS[fmt][1])
        if path is not None:
            await self.export_to(fmt, path, key)

    async def export_to(self, fmt: str, path: Path, key: str) -> None:
        self.button.setEnabled(False)
        try:
            page = await self.chats.export(key, "html" if fmt == "pdf" else fmt)
            if fmt == "pdf":
                await asyncio.to_thread(atomic_write_bytes, path, _pdf(page))
            else:
                await asyncio.to_thread(atomic_write_text, path, page)
        except OSError as exc:
            self._failed(path, exc)
        finally:
            self.button.setEnabled(bool(self.session_key))

    def ask_archive(self, _checked: bool = False) -> None:
        """Ask where, then write every chat into one zip (a backup)."""
        spawn(self._ask_archive())

    async def _ask_archive(self) -> None:
        path = await self._pick("Export all chats", "nanobot-chats.zip", "Zip (*.zip)")
        if path is not None:
            await self.archive_to(path)

    async def archive_to(self, path: Path) -> None:
        self.button.setEnabled(False)
        try:
            await self.chats.archive(path)
        except OSError as exc:
            self._failed(path, exc)
        finally:
            self.button.setEnabled(bool(self.session_key))

    async def _pick(self, title: str, name: str, kind: str) -> Path | None:
        """The file the person chose to save to, starting in their home folder with `name`; None when cancelled."""
        dialog = QFileDialog(self.window(), title, str(Path.home() / name), kind)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix(Path(name).suffix.lstrip("."))  # a name typed without it gets it: friday → friday.pdf
        accepted = await run_dialog(dialog) == QDialog.DialogCode.Accepted
        chosen = dialog.selectedFiles()
        dialog.deleteLater()
        return Path(chosen[0]) if accepted and chosen else None

    def _failed(self, path: Path, exc: OSError) -> None:
        """Say why over the window; opened, not awaited: the menu is usable again while it is read."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Export", f"Could not save {path}: {exc.strerror or exc}",
                          QMessageBox.StandardButton.Ok, self.window())
        box.finished.connect(box.deleteLater)
        box.open()


def _pdf(page: str) -> bytes:
    """The page as a PDF, made in memory: Qt's writer says nothing when it cannot open a file, so the file is
    written as the other formats are, atomically, and a failure is said. Qt lays the page out on the GUI thread
    (QTextDocument is not for other threads); a chat is quick to."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    document = QTextDocument()
    document.setHtml(page)
    document.print_(writer)
    return bytes(buffer.data().data())

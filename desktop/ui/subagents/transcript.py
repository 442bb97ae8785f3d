"""A background task's transcript, read-only, drawn as the chat draws a turn: the task, what the assistant said
(Markdown), the tools it ran as tool cards with their results, and how it ended. The rows come from
desktop/conversation/transcript.py, the chat's own reader."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtWidgets import QDialog, QVBoxLayout, QWidget

from desktop.conversation.transcript import ChatRow, Kind, rows_from_task_file
from desktop.kernel.channels import Channel, session_key
from desktop.subagents.events import TaskSnapshot
from desktop.ui.chat.model import TranscriptModel
from desktop.ui.chat.view import MessageView
from desktop.ui.links import open_link


class TranscriptDialog(QDialog):
    def __init__(self, task: TaskSnapshot, workspace: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Background task: {task.label}")
        self.resize(720, 560)
        self.model = TranscriptModel(session_key(Channel.SUBAGENT, task.id), self)
        self.view = MessageView()
        self.view.set_model(self.model)
        self.view.link_clicked.connect(lambda link: open_link(link, workspace))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)

    async def load(self, path: Path) -> None:
        """Read the file off the GUI thread; a missing file says so instead of showing nothing."""
        try:
            raw = await asyncio.to_thread(path.read_text, encoding="utf-8", errors="replace")
        except OSError as exc:
            self.model.load([ChatRow(Kind.NOTICE, f"The transcript could not be read: {exc.strerror or exc} ({path})")])
            return
        self.model.load(await asyncio.to_thread(rows_from_task_file, raw))

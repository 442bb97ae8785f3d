"""The open chat's background tasks, above the composer: what each is doing, for how long and what its model
calls have used so far, Cancel while it runs, and its outcome with its transcript once it has ended. Hidden
while the chat has none.

It follows the core's BackgroundTasks events (snapshots of every task); the clock ticks only while one runs."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.kernel.bus import ChatSetAside, Event
from desktop.kernel.taskset import spawn
from desktop.subagents import Subagents
from desktop.subagents.events import BackgroundTasks, TaskSnapshot
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.plain_text import plain_tip
from desktop.ui.subagents.transcript import TranscriptDialog
from desktop.usage.report import brief

STYLE = """
#tasksPanel { border: 1px solid palette(midlight); border-radius: 10px; background: palette(alternate-base); }
#tasksHeading { color: palette(placeholder-text); font-size: 11px; }
#taskLabel { font-weight: 600; }
#taskTime, #taskUsage, #taskDetail { color: palette(placeholder-text); }
#taskDetail[outcome="failed"] { color: #c0392b; }
"""
LABEL_CHARS = 60  # a label the model made long must not widen the window
DETAIL_CHARS = 200  # the whole result is in its tooltip and its transcript
_ENDED = {"done": "Done", "failed": "Failed"}


class TaskRow(QWidget):
    """One task: label, time, tokens, and a second line with its step (running) or its outcome (ended)."""

    def __init__(self, task: TaskSnapshot, panel: TasksPanel) -> None:
        super().__init__(panel)
        self.task = task
        # The model names the task, chooses its steps and writes its report: all words, never markup, where
        # <img src="/a/path"> is a file Qt would read.
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setObjectName("taskLabel")
        self.time = QLabel()
        self.time.setObjectName("taskTime")
        self.usage = QLabel()
        self.usage.setObjectName("taskUsage")
        self.detail = QLabel()
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setObjectName("taskDetail")
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setWordWrap(True)  # a long report or command must not widen the window
        self.cancel_button = _button("Cancel", "Stop this background task", lambda: panel.cancel(self))
        self.open_button = _button("Open transcript", "Everything the task did, step by step",
                            lambda: panel.open_transcript(self.task))
        self.hide_button = _button("✕", "Hide it here (/tasks still lists it)", lambda: panel.dismiss(self.task.id))
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.setSpacing(6)
        top.addWidget(self.label)
        top.addWidget(self.time)
        top.addWidget(self.usage)
        top.addStretch(1)
        for button in (self.cancel_button, self.open_button, self.hide_button):
            top.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 2)
        layout.setSpacing(0)
        layout.addLayout(top)
        layout.addWidget(self.detail)
        self.update_from(task)

    def update_from(self, task: TaskSnapshot) -> None:
        self.task = task
        self.label.setText(task.label if len(task.label) <= LABEL_CHARS else task.label[:LABEL_CHARS] + "…")
        self.cancel_button.setVisible(task.active)
        self.open_button.setVisible(not task.active)
        self.hide_button.setVisible(not task.active)
        self.usage.setText(f"· {brief(task.tokens, task.cost_usd)}" if task.tokens else "")
        self.usage.setVisible(bool(task.tokens))
        if task.status == "running":
            detail = task.step or "Thinking…"
        elif task.status == "queued":
            detail = "Waiting for a free slot"
        elif task.status == "cancelled":  # its result says how: "Cancelled." or "Cancelled before it started."
            detail = task.result or "Cancelled."
        else:
            said = readable(task.result)
            detail = f"{_ENDED.get(task.status, task.status)}: {said}" if said else _ENDED.get(task.status, "")
        self.detail.setProperty("outcome", task.status)
        self.detail.setText(detail[:DETAIL_CHARS] + ("…" if len(detail) > DETAIL_CHARS else ""))
        self.detail.setToolTip(plain_tip(_plain(task.result)) if not task.active else "")
        self.detail.style().polish(self.detail)
        self.tick(time.time())

    def tick(self, now: float) -> None:
        task = self.task
        if task.status == "running":
            self.time.setText(f"· {_clock(now - task.started)}")
        elif task.status == "queued":
            self.time.setText("")
        else:
            self.time.setText(f"· took {_clock((task.finished or now) - task.started)}")


class TasksPanel(ChatPanel):
    def __init__(self, tasks: Subagents, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        """`tasks` runs the background tasks; `bridge` carries their BackgroundTasks events."""
        super().__init__(parent)
        self.tasks = tasks
        self.setObjectName("tasksPanel")
        self.setStyleSheet(STYLE)
        self.bridge = bridge
        self.session_key = ""
        self.rows: dict[str, TaskRow] = {}
        self._tasks = tasks.snapshots()
        self._dismissed: set[str] = set()
        self._dialogs: dict[str, TranscriptDialog] = {}
        heading = QLabel("Background tasks")
        heading.setObjectName("tasksHeading")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(12, 6, 8, 6)
        self._layout.setSpacing(2)
        self._layout.addWidget(heading)
        self.clock = QTimer(self, interval=1000)  # only while a shown task runs
        self.clock.timeout.connect(self._tick)
        bridge.event.connect(self._on_event)
        self.hide()

    def show_session(self, key: str) -> None:
        self.session_key = key
        self._show()

    def cancel(self, row: TaskRow) -> None:
        row.cancel_button.setEnabled(False)  # the row stays as it is until the event says the task has ended
        row.cancel_button.setText("Cancelling…")
        self._cancel(row.task.id)

    def _cancel(self, task_id: str) -> None:
        task = self.tasks.tasks.get(task_id)
        if task is not None and task.active:  # nothing when it has ended already
            self.tasks.cancel(task)

    def open_transcript(self, task: TaskSnapshot) -> None:
        dialog = self._dialogs.get(task.id)
        if dialog is None:
            dialog = self._dialogs[task.id] = TranscriptDialog(task, self.bridge.workspace, self.window())
            dialog.finished.connect(lambda _result, i=task.id: self._dialogs.pop(i, None))
            spawn(dialog.load(self.tasks.transcript(task.id)))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()

    def dismiss(self, task_id: str) -> None:
        self._dismissed.add(task_id)
        self._show()

    def _on_event(self, event: Event) -> None:
        if isinstance(event, BackgroundTasks):
            self._tasks = event.tasks
            self._show()
        elif isinstance(event, ChatSetAside):  # /new: the old conversation's tasks are not the fresh chat's
            self._dismissed.update(t.id for t in self._tasks if t.origin == event.session_key)
            self._show()

    def _show(self) -> None:
        shown = [t for t in self._tasks if t.origin == self.session_key and t.id not in self._dismissed]
        shown.sort(key=lambda t: (not t.active, -t.started))  # running and waiting first, newest first
        for task_id in [i for i in self.rows if i not in {t.id for t in shown}]:
            self.rows.pop(task_id).deleteLater()
        for index, task in enumerate(shown):
            row = self.rows.get(task.id)
            if row is None:
                row = self.rows[task.id] = TaskRow(task, self)
            elif row.task != task:
                row.update_from(task)
            if self._layout.indexOf(row) != index + 1:  # after the heading
                self._layout.insertWidget(index + 1, row)
        self.setVisible(bool(shown))
        running = any(t.status == "running" for t in shown)
        if running and not self.clock.isActive():
            self.clock.start()
        elif not running:
            self.clock.stop()

    def _tick(self) -> None:
        now = time.time()
        for row in self.rows.values():
            row.tick(now)


def _button(text: str, tip: str, clicked: Callable[[], None]) -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setAutoRaise(True)
    button.clicked.connect(clicked)
    return button


def readable(markdown: str) -> str:
    """A report's words on one line, its Markdown rendered (no `##` or `**`): its headings dropped when it says
    more than them, its list items marked."""
    doc = QTextDocument()
    doc.setMarkdown(markdown)
    said: list[str] = []
    headings: list[str] = []
    block = doc.begin()
    while block.isValid():
        text = " ".join(block.text().split())
        if text and block.blockFormat().headingLevel():
            headings.append(text)
        elif text:
            said.append(f"• {text}" if block.textList() is not None else text)
        block = block.next()
    return " ".join(said or headings)


def _plain(markdown: str) -> str:
    """The whole report's words, its Markdown rendered, for a tooltip (through plain_tip: words that spell markup
    stay words)."""
    doc = QTextDocument()
    doc.setMarkdown(markdown)
    return doc.toPlainText()


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"

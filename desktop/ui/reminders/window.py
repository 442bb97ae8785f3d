"""The Reminders window (tray menu → Reminders): every scheduled job with its schedule in words, its next
run in local time, how its last run went, the chat it belongs to and the tools it may use without asking (a run
has nobody to ask); under them, the selected job's last runs: when, how each ended, its tokens and cost, and
the runs it missed and why. Pause or resume, run now, delete, open its chat, decide its tools ahead, and allow
what its last run wanted and run it again. It follows changes made anywhere (the `cron` tool, a run, the
command line in the app) as they happen."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QShowEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.approvals.ahead import Grant, GrantError
from desktop.kernel.taskset import spawn
from desktop.reminders import Reminders
from desktop.reminders.book import local
from desktop.reminders.jobs import Job
from desktop.reminders.runs import Outcome, Run, outcome_words
from desktop.reminders.tool import grants_in_words
from desktop.scheduler.schedules import describe
from desktop.ui.bridge import CoreBridge
from desktop.ui.chats.names import ChatNames
from desktop.ui.form_widgets import confirm
from desktop.ui.plain_text import plain_tip
from desktop.ui.skills import dialogs
from desktop.ui.skills.details import Notice
from desktop.ui.skills.model import GREEN, RED
from desktop.usage.report import brief

ID_ROLE = Qt.ItemDataRole.UserRole + 1
RUN_HEADERS = ["When", "How it went", "Tokens", "Cost"]
NO_JOB = "Select a reminder to see its last runs."
SHORT = {Outcome.ANSWERED: "Answered", Outcome.FAILED: "Failed", Outcome.BUDGET: "Stopped by budget",
         Outcome.STOPPED: "Stopped", Outcome.MISSED: "Missed"}  # the last run in the jobs' table
TROUBLE = (Outcome.FAILED, Outcome.BUDGET, Outcome.WANTED, Outcome.MISSED)  # shown in red
EMPTY = ("No reminders yet. Ask in any chat, for example “remind me in 20 minutes to stretch” or "
         "“every weekday at 9, summarise my calendar”.")


def next_run_words(job: Job) -> str:
    if job.missed is not None:
        return f"Missed ({local(job.missed)})"
    if job.paused:
        return "Paused"
    return local(job.next_run) if job.next_run is not None else "—"


def tools_words(job: Job) -> str:
    """Its grants, and what its last run wanted and lacked."""
    words = [f"{verb} {', '.join(names)}" for verb, names in grants_in_words(job)]
    if job.wanted:
        words.append(f"wanted {', '.join(job.wanted)}")
    return " · ".join(words) or "—"


def last_run_words(job: Job) -> str:
    """Its last run at a glance: how it went, and what it used when it made calls."""
    if not job.runs:
        return "—"
    run = job.runs[-1]
    short = f"Wanted {run.reason}" if run.outcome is Outcome.WANTED else SHORT[run.outcome]
    return f"{short} · {brief(run.tokens, run.cost_usd)}" if run.tokens else short


def run_cells(run: Run) -> list[QStandardItem]:
    """One run's row: when, how it went (the reason in full on hover), tokens, cost."""
    how = QStandardItem(outcome_words(run))
    if run.reason:
        how.setToolTip(plain_tip(run.reason))  # a model server's or a tool's words
    if run.outcome in TROUBLE:
        how.setForeground(QColor(RED))
    ran = run.outcome is not Outcome.MISSED
    cost = QStandardItem("—" if run.cost_usd is None or not ran else f"${run.cost_usd:,.4f}")
    if ran and run.cost_usd is None:
        cost.setToolTip("No price known (a local server, or a model litellm does not price)")
    cells = [QStandardItem(local(run.at)), how, QStandardItem(f"{run.tokens:,}" if ran else "—"), cost]
    for cell in (cells[2], cells[3]):
        cell.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return cells


def names_of(text: str) -> list[str]:
    return [name.strip() for name in text.replace(";", ",").split(",") if name.strip()]


class ToolsDialog(QDialog):
    """What one job may use without asking, and what never, as comma-separated tool names. OK checks the names
    (a typo would be saved and grant nothing): a wrong one is said here and the dialog stays open with the
    typing, where closing it lost what was typed."""

    def __init__(self, job: Job, reminders: Reminders, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._job = job
        self._reminders = reminders
        self.setWindowTitle(f"Tools for “{job.label}”")
        self.allowed = QLineEdit(", ".join(n for n, g in job.grants.items() if g == "allow"))
        self.denied = QLineEdit(", ".join(n for n, g in job.grants.items() if g == "deny"))
        for line in (self.allowed, self.denied):
            line.setPlaceholderText("exec, web_fetch, mcp:SERVER")
        intro = QLabel("A reminder runs with nobody to ask: a tool that would ask fails at once unless it is "
                       "allowed here. mcp:SERVER stands for all the tools of one MCP server.")
        intro.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(f"color: {RED}")
        self.problem.hide()
        form = QFormLayout(self)
        form.addRow(intro)
        form.addRow("May use without asking", self.allowed)
        form.addRow("Never uses", self.denied)
        form.addRow(self.problem)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._ok)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def grants(self) -> dict[str, Grant]:
        """The names typed; one in both fields is allowed."""
        return {**dict.fromkeys(names_of(self.denied.text()), "deny"),
                **dict.fromkeys(names_of(self.allowed.text()), "allow")}

    def _ok(self) -> None:
        try:
            self._reminders.checked_grants(self._job, self.grants())
        except GrantError as exc:
            self.problem.setText(str(exc)[:1].upper() + str(exc)[1:] + ".")
            self.problem.show()
            return
        self.accept()


async def ask_tools(parent: QWidget, job: Job, reminders: Reminders) -> dict[str, Grant] | None:
    dialog = ToolsDialog(job, reminders, parent)
    accepted = await dialogs.run_dialog(dialog) == QDialog.DialogCode.Accepted
    grants = dialog.grants()
    dialog.deleteLater()
    return grants if accepted else None


def _sentence(words: str) -> str:
    return words[:1].upper() + words[1:]


class RemindersWindow(QWidget):
    open_session = Signal(str)  # "Open chat" or a double click: the app shows the job's chat

    def __init__(self, reminders: Reminders, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        """`reminders` holds the jobs; `bridge` names their chats (read again when shown and when the jobs
        change: a new job may be in a chat saved since)."""
        super().__init__(parent)
        self.reminders = reminders
        self.setWindowTitle("Reminders")
        self.resize(860, 420)
        # The question Delete asks; tests replace it with a plain coroutine.
        self.confirm: Callable[[str, str, str], Awaitable[bool]] = (
            lambda title, text, action: confirm(self, title, text, action))
        # The tools dialog; tests replace it with a plain coroutine. None: cancelled.
        self.ask_tools: Callable[[Job], Awaitable[dict[str, Grant] | None]] = (
            lambda job: ask_tools(self, job, reminders))
        self.names = ChatNames(bridge)  # the jobs' chats, by their titles
        self.model = QStandardItemModel(0, 6, self)
        self.model.setHorizontalHeaderLabels(["Reminder", "When", "Next run", "Last run", "Chat", "Tools"])
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setShowGrid(False)
        self.table.setAlternatingRowColors(True)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3, 4, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.runs_title = QLabel(NO_JOB)
        self.runs_title.setTextFormat(Qt.TextFormat.PlainText)  # it names the job, as the model may have
        self.runs_model = QStandardItemModel(0, len(RUN_HEADERS), self)
        self.runs_model.setHorizontalHeaderLabels(RUN_HEADERS)
        self.runs_table = QTableView()
        self.runs_table.setModel(self.runs_model)
        self.runs_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.runs_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.runs_table.verticalHeader().hide()
        self.runs_table.setShowGrid(False)
        runs_header = self.runs_table.horizontalHeader()
        for column in range(len(RUN_HEADERS)):
            runs_header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        runs_header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.pause_button = QPushButton("Pause")
        self.run_button = QPushButton("Run now")
        self.delete_button = QPushButton("Delete…")
        self.open_button = QPushButton("Open chat")
        self.tools_button = QPushButton("Tools…")
        self.tools_button.setToolTip("What this reminder may use without asking, and what never")
        self.again_button = QPushButton("Allow and run again")
        self.again_button.setToolTip("Allow what its last run wanted and could not use, and run it now")
        self.empty = QLabel(EMPTY)
        self.empty.setWordWrap(True)
        self.notice = Notice()
        buttons = QHBoxLayout()
        for button in (self.pause_button, self.run_button, self.delete_button, self.tools_button,
                       self.again_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.notice)
        layout.addWidget(self.empty)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.runs_title)
        layout.addWidget(self.runs_table, 2)
        self.pause_button.clicked.connect(lambda: spawn(self.toggle_pause()))
        self.run_button.clicked.connect(self.run_now)
        self.delete_button.clicked.connect(lambda: spawn(self.delete()))
        self.open_button.clicked.connect(self._open)
        self.tools_button.clicked.connect(lambda: spawn(self.edit_tools()))
        self.again_button.clicked.connect(self.allow_and_run_again)
        self.table.doubleClicked.connect(lambda _index: self._open())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.destroyed.connect(reminders.subscribe(self._jobs_changed))  # no calls into a deleted window
        self.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            spawn(self._load_titles())

    def selected(self) -> Job | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        job_id = rows[0].data(ID_ROLE)
        return next((job for job in self.reminders.jobs if job.id == job_id), None)

    def refresh(self) -> None:
        """Show the jobs as they are now, keeping the selection."""
        chosen = self.selected()
        self.model.removeRows(0, self.model.rowCount())
        jobs = self.reminders.jobs
        for job in jobs:
            label = QStandardItem(job.label)
            label.setData(job.id, ID_ROLE)
            label.setToolTip(plain_tip(job.message))  # the model may have written it (the cron tool)
            chat = QStandardItem(self.names.words(job.session))
            chat.setToolTip(plain_tip(job.session))
            tools = QStandardItem(tools_words(job))
            if job.wanted:
                tools.setForeground(QColor(RED))
                tools.setToolTip(plain_tip(f"Its last run wanted {', '.join(job.wanted)}, which it may not use "
                                           "without asking"))  # an MCP server names its tools
            last = QStandardItem(last_run_words(job))
            if job.runs and job.runs[-1].outcome in TROUBLE:
                last.setForeground(QColor(RED))
            self.model.appendRow([label, QStandardItem(_sentence(describe(job.schedule))),
                                  QStandardItem(next_run_words(job)), last, chat, tools])
        if chosen is not None:
            for row in range(self.model.rowCount()):
                if self.model.item(row, 0).data(ID_ROLE) == chosen.id:
                    self.table.selectRow(row)
        self.table.horizontalHeader().resizeSections()  # rows put back fit only after a resize: fit them now
        self.empty.setVisible(not jobs)
        for part in (self.table, self.runs_title):
            part.setVisible(bool(jobs))
        self._enable()

    async def toggle_pause(self) -> None:
        job = self.selected()
        if job is not None and job.missed is None:
            try:
                await self.reminders.set_paused(job.id, not job.paused)
            except OSError as exc:
                self._not_saved(exc)

    def run_now(self) -> None:
        job = self.selected()
        if job is None:
            return
        self.reminders.run_now(job.id)
        self.notice.show_html(GREEN, html.escape(f"“{job.label}” is running now in its chat; "
                                                 "the answer comes as a notification."))

    async def edit_tools(self) -> None:
        """Decide ahead what the selected job may use: each name allowed or denied, the rest as its policy says."""
        job = self.selected()
        if job is None:
            return
        chosen = await self.ask_tools(job)
        if chosen is None:
            return
        try:
            await self.reminders.set_grants(job.id, chosen)
        except LookupError:
            self._gone(job)
            return
        except GrantError as exc:
            self.notice.show_html(RED, html.escape(str(exc)))
            return
        except OSError as exc:
            self._not_saved(exc)
            return
        self.notice.show_html(GREEN, html.escape(f"“{job.label}”: {tools_words(job)}."))

    def allow_and_run_again(self) -> None:
        job = self.selected()
        if job is None or not job.wanted:
            return
        self.reminders.allow_and_rerun(job, list(job.wanted))
        self.notice.show_html(GREEN, html.escape(f"“{job.label}” may use {', '.join(job.wanted)} now and is "
                                                 "running again in its chat."))

    async def delete(self) -> bool:
        job = self.selected()
        if job is None:
            return False
        if not await self.confirm("Delete reminder", f"Delete “{job.label}” ({describe(job.schedule)})? "
                                  "It will not run again.", "Delete"):
            return False
        try:
            await self.reminders.remove(job.id)
        except LookupError:  # it ran (a one-shot is done) or went away meanwhile
            self._gone(job)
            return False
        except OSError as exc:
            self._not_saved(exc)
            return False
        self.notice.show_html(GREEN, html.escape(f"Deleted “{job.label}”."))
        return True

    def _gone(self, job: Job) -> None:
        """The job went while a question was open: said by its name (the core's words name its id, for the model)."""
        self.notice.show_html(RED, html.escape(f"“{job.label}” is no longer there: it ran for the last time or was "
                                               "deleted elsewhere meanwhile."))

    def _not_saved(self, exc: OSError) -> None:
        """The change holds in the running app (the table shows it), but the file did not take it (a full disk):
        said, or a restart would bring the reminder back as it was without a word."""
        self.notice.show_html(RED, html.escape(f"Changed here, but the reminders could not be saved: "
                                               f"{exc.strerror or exc}. They are saved with the next change that "
                                               "can be; until then, quitting the app undoes this one."))

    def _open(self) -> None:
        job = self.selected()
        if job is not None:
            self.open_session.emit(job.session)

    def _jobs_changed(self) -> None:
        self.refresh()
        if self.isVisible():
            spawn(self._load_titles())

    async def _load_titles(self) -> None:
        await self.names.read()
        if isValid(self):  # closed for good meanwhile
            self.refresh()

    def _show_runs(self, job: Job | None) -> None:
        """The selected job's last runs, newest first."""
        self.runs_model.removeRows(0, self.runs_model.rowCount())
        if job is None:
            self.runs_title.setText(NO_JOB)
        elif not job.runs:
            self.runs_title.setText(f"“{job.label}” has not run yet.")
        else:
            self.runs_title.setText(f"Last runs of “{job.label}”")
            for run in reversed(job.runs):
                self.runs_model.appendRow(run_cells(run))
        self.runs_table.setVisible(job is not None and bool(job.runs))

    def _enable(self) -> None:
        job = self.selected()
        self._show_runs(job)
        for button in (self.pause_button, self.run_button, self.delete_button, self.open_button, self.tools_button):
            button.setEnabled(job is not None)
        self.again_button.setVisible(job is not None and bool(job.wanted))
        self.pause_button.setText("Resume" if job is not None and job.paused else "Pause")
        if job is not None and job.missed is not None:
            self.pause_button.setEnabled(False)

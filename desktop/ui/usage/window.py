"""The Usage window (tray menu → Usage): tokens and cost of the last days by day and by source, today's unattended
use against its budget, the chats and the jobs that used most, and the calls as CSV. It reads the usage log
off the GUI thread when opened and then follows each call as it is counted."""

from __future__ import annotations

import asyncio
import html
from datetime import date
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.taskset import spawn
from desktop.kernel.work import Source
from desktop.ui.bridge import CoreBridge
from desktop.ui.chats.names import ChatNames
from desktop.ui.skills.details import Notice
from desktop.ui.skills.dialogs import run_dialog
from desktop.ui.skills.model import GREEN, RED
from desktop.ui.usage.chart import COLOURS, DayBars, cost_text
from desktop.usage import Usage
from desktop.usage.records import CallRecord
from desktop.usage.report import Summary, Totals, first_day, midnight, to_csv, tokens_text
from desktop.usage.settings import BudgetsConfig

PERIODS = ((7, "Last 7 days"), (30, "Last 30 days"), (90, "Last 90 days"), (365, "Last year"))
JOBS = {Source.REMINDER: "Reminders in “{chat}”", Source.HEARTBEAT: "Heartbeat", Source.SUBAGENT:
        "Background tasks of “{chat}”", Source.DREAM: "Dream", Source.CONSOLIDATION: "Summaries of “{chat}”"}
TOP_ROWS = 8


def budget_words(budgets: BudgetsConfig, tokens: int, cost: float) -> str:
    """Today's unattended use, and against which limits."""
    used = f"{tokens:,} tokens" + (f", ${cost:,.2f}" if cost else "")
    limits = [f"{budgets.unattended_daily_tokens:,} tokens"] if budgets.unattended_daily_tokens else []
    limits += [f"${budgets.unattended_daily_cost:,.2f}"] if budgets.unattended_daily_cost else []
    limit = f" of a budget of {' and '.join(limits)} a day" if limits else " (no daily budget set)"
    return f"Unattended work today (reminders, heartbeat, Dream, background tasks): {used}{limit}."


class UsageWindow(QWidget):
    def __init__(self, usage: Usage, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.usage = usage
        self.setWindowTitle("Usage")
        self.resize(900, 620)
        self.summary: Summary | None = None
        self.names = ChatNames(bridge)  # the chats by their titles
        self.period = QComboBox()
        for days, label in PERIODS:
            self.period.addItem(label, days)
        self.period.setCurrentIndex(1)
        self.export_button = QPushButton("Export CSV…")
        self.totals = QLabel("Counting…")
        self.totals.setTextFormat(Qt.TextFormat.RichText)
        self.budget = QLabel()
        self.budget.setWordWrap(True)
        self.legend = QLabel()
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        self.chart = DayBars()
        self.chats = _table("Chat")
        self.jobs = _table("Job")
        self.notice = Notice()
        top = QHBoxLayout()
        top.addWidget(self.period)
        top.addStretch(1)
        top.addWidget(self.export_button)
        tables = QGridLayout()
        tables.addWidget(QLabel("<b>Chats that used most</b>"), 0, 0)
        tables.addWidget(QLabel("<b>Jobs that used most</b>"), 0, 1)
        tables.addWidget(self.chats, 1, 0)
        tables.addWidget(self.jobs, 1, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.notice)
        layout.addWidget(self.totals)
        layout.addWidget(self.budget)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.legend)
        layout.addLayout(tables, 1)
        self._redraw = QTimer(self, singleShot=True, interval=300)  # a burst of calls is one redraw
        self._redraw.timeout.connect(self.show_summary)
        self.period.currentIndexChanged.connect(lambda _: spawn(self.reload()) if self.isVisible() else None)
        self.export_button.clicked.connect(lambda: spawn(self.choose_export()))
        self.destroyed.connect(usage.subscribe(self._counted))  # no calls into a deleted window

    @property
    def days(self) -> int:
        return int(self.period.currentData())

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not event.spontaneous():
            spawn(self.reload())

    async def reload(self) -> None:
        """Add up the period (off the GUI thread, from the per-day summary) while the chats' titles are read, then
        show both at once: `summary` is set only when the window is filled. A period chosen meanwhile has a
        reading of its own, and only its summary is shown: a year read after the week would land under its label."""
        days = self.days
        summary, _ = await asyncio.gather(self.usage.summary(first_day(days)), self.names.read())
        if days != self.days:
            return
        self.summary = summary
        self.show_summary()

    def _counted(self, record: CallRecord) -> None:
        if self.summary is not None and record.at >= midnight(self.summary.first):
            self.summary.add(record)
            self._redraw.start()

    def show_summary(self) -> None:
        summary = self.summary
        if summary is None:
            return
        total = summary.total
        label = dict(PERIODS)[self.days]
        self.totals.setText(f"<b>{label}</b>: {total.calls:,} model calls, {total.tokens:,} tokens "
                            f"({total.cached_tokens:,} of them read from cache), {cost_text(total)}"
                            + (f"; {total.estimated:,} estimated (their server reported no usage)"
                               if total.estimated else ""))
        tokens, cost = self.usage.meter.today
        self.budget.setText(budget_words(self.usage.meter.budgets, tokens, cost))
        self.legend.setText(" &nbsp; ".join(
            f"<span style='color:{COLOURS[source]}'>■</span> {source.value} {tokens_text(totals.tokens)}"
            for source, totals in summary.by_source.items()))
        self.chart.show_summary(summary)
        words = self.names.words
        _fill(self.chats, [(words(session), totals) for _, session, totals in summary.top(False, TOP_ROWS)])
        _fill(self.jobs, [(JOBS[source].format(chat=words(session)), totals)
                          for source, session, totals in summary.top(True, TOP_ROWS)])

    async def choose_export(self) -> None:
        dialog = QFileDialog(self, "Export usage as CSV")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(["CSV files (*.csv)"])
        dialog.setDefaultSuffix("csv")
        dialog.selectFile(f"nanobot-usage-{date.today():%Y-%m-%d}.csv")
        accepted = await run_dialog(dialog) == QDialog.DialogCode.Accepted
        chosen = dialog.selectedFiles()
        dialog.deleteLater()
        if accepted and chosen:
            await self.export(Path(chosen[0]))

    async def export(self, path: Path) -> None:
        """Every call of the period, one row each, written whole or not at all."""
        since, log = midnight(first_day(self.days)), self.usage.log
        try:
            count = await asyncio.to_thread(lambda: _write_csv(path, log.read_since(since)))
        except OSError as exc:
            self.notice.show_html(RED, html.escape(f"Could not write {path}: {exc.strerror or exc}"))
            return
        self.notice.show_html(GREEN, html.escape(f"Saved {count:,} calls to {path}."))


def _write_csv(path: Path, records: list[CallRecord]) -> int:
    atomic_write_text(path, to_csv(records))
    return len(records)


def _table(what: str) -> QTreeWidget:
    table = QTreeWidget()
    table.setHeaderLabels([what, "Tokens", "Cost"])
    table.setRootIsDecorated(False)
    table.setAlternatingRowColors(True)
    header = table.header()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    header.setStretchLastSection(False)
    for column in (1, 2):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    return table


def _fill(table: QTreeWidget, rows: list[tuple[str, Totals]]) -> None:
    table.clear()
    for name, totals in rows:
        item = QTreeWidgetItem([name, f"{totals.tokens:,}", "—" if totals.cost_usd is None
                                else f"${totals.cost_usd:,.4f}"])
        item.setToolTip(0, f"{totals.calls:,} calls: {totals.prompt_tokens:,} prompt ({totals.cached_tokens:,} "
                        f"cached), {totals.completion_tokens:,} completion")
        for column in (1, 2):
            item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        table.addTopLevelItem(item)

"""The Changes tab: the git log of the memory files (Dream runs, hand edits, restores), each change
as a coloured diff with a button that puts the files back as they were before it."""

from __future__ import annotations

import html

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from desktop.kernel.local_time import local_time
from desktop.kernel.taskset import spawn
from desktop.memory import Memory
from desktop.memory.git_history import Commit, GitError
from desktop.ui.skills.details import Notice
from desktop.ui.skills.model import GREEN, RED

REV_ROLE = Qt.ItemDataRole.UserRole + 1
LOG_LIMIT = 500
_LINE_STYLES = (("+++", "color:#64748b"), ("---", "color:#64748b"), ("+", "background:#dcfce7;color:#166534"),
                ("-", "background:#fee2e2;color:#991b1b"), ("@@", "color:#2563eb"),
                ("diff ", "font-weight:bold;color:#0f172a"), ("index ", "color:#94a3b8"),
                ("new file", "color:#94a3b8"), ("deleted file", "color:#94a3b8"))


def diff_html(diff: str) -> str:
    """A unified diff as HTML with added lines green and removed lines red."""
    rows = []
    for line in diff.splitlines():
        style = next((s for prefix, s in _LINE_STYLES if line.startswith(prefix)), "")
        rows.append(f"<div style='{style}'>{html.escape(line) or '&nbsp;'}</div>")
    return ("<div style='font-family:monospace;white-space:pre-wrap'>" + "".join(rows) + "</div>") if rows else ""


class ChangesTab(QWidget):
    restored = Signal(str)  # the new commit

    def __init__(self, memory: Memory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.memory = memory
        self.model = QStandardItemModel(0, 2, self)
        self.shown_rev: str | None = None
        self.list = QTreeView()
        self.list.setModel(self.model)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.diff = QTextBrowser()
        self.restore_button = QPushButton("Restore before this change")
        self.restore_button.setEnabled(False)
        self.restore_button.setToolTip("Put the files this change touched back as they were before it "
                                       "(recorded as a new change, so it can be undone too)")
        self.notice = Notice()
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.restore_button, 0, Qt.AlignmentFlag.AlignTop)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(top)
        column.addWidget(self.notice)
        column.addWidget(self.diff, 1)
        split = QSplitter()
        split.addWidget(self.list)
        split.addWidget(right)
        split.setStretchFactor(1, 3)
        split.setSizes([380, 620])
        layout = QVBoxLayout(self)
        layout.addWidget(split)
        self.list.selectionModel().currentRowChanged.connect(self._picked)
        self.restore_button.clicked.connect(lambda: spawn(self.restore()))

    async def load(self, select: str | None = None) -> None:
        """Read the log; select `select` (a revision or its prefix), else keep the selection, else the newest."""
        keep = select or self.shown_rev
        try:
            commits = await self.memory.git.log(LOG_LIMIT)
        except GitError as exc:
            self.notice.show_html(RED, html.escape(f"Cannot read the memory history: {exc}"))
            return
        self.model.removeRows(0, self.model.rowCount())
        self.model.setHorizontalHeaderLabels(["Change", "When"])
        for commit in commits:
            item = QStandardItem(commit.subject)
            item.setData(commit.rev, REV_ROLE)
            item.setToolTip(f"{commit.short}\n{commit.body or commit.subject}")
            self.model.appendRow([item, QStandardItem(local_time(commit.date))])
        if not commits:
            self.title.setText("No changes recorded yet. Dream runs and your edits in the Memory tab appear here.")
            self.diff.clear()
            self.restore_button.setEnabled(False)
            return
        row = next((i for i, c in enumerate(commits) if keep and c.rev.startswith(keep)), 0)
        if select and not commits[row].rev.startswith(select):
            await self.show_rev(select)  # older than the list holds
            return
        self.shown_rev = commits[row].rev  # so the selection change below does not load it a second time
        self.list.setCurrentIndex(self.model.index(row, 0))
        await self.show_rev(commits[row].rev)

    async def show_rev(self, rev: str) -> None:
        try:
            commit, files, diff = await self.memory.git.show(rev)
        except GitError as exc:
            self.notice.show_html(RED, html.escape(str(exc)))
            return
        self.shown_rev = commit.rev
        self._describe(commit, files)
        self.diff.setHtml(diff_html(diff) or "<i>No file content changed.</i>")
        self.restore_button.setEnabled(bool(files))

    async def restore(self) -> None:
        if self.shown_rev is None:
            return
        rev = self.shown_rev
        self.restore_button.setEnabled(False)
        try:
            new, files = await self.memory.git.restore_before(rev)
        except GitError as exc:
            self.notice.show_html(RED, html.escape(f"Not restored: {exc}"))
            self.restore_button.setEnabled(True)
            return
        if new is None:
            self.notice.show_html(GREEN, html.escape(f"{', '.join(files)} already match the version before "
                                                     f"{rev[:7]}."))
            self.restore_button.setEnabled(True)
            return
        self.notice.show_html(GREEN, html.escape(f"Restored {', '.join(files)} to before {rev[:7]} "
                                                 f"(new change {new[:7]})."))
        await self.load(new)
        self.restored.emit(new)

    def _picked(self, current: QModelIndex, _previous: QModelIndex) -> None:
        rev = current.siblingAtColumn(0).data(REV_ROLE) if current.isValid() else None
        if rev and rev != self.shown_rev:
            self.notice.hide()
            spawn(self.show_rev(rev))

    def _describe(self, commit: Commit, files: list[str]) -> None:
        body = f"<br><span style='white-space:pre-wrap'>{html.escape(commit.body)}</span>" if commit.body else ""
        when = local_time(commit.date, seconds=True)
        self.title.setText(f"<b>{html.escape(commit.subject)}</b><br>"
                           f"<span style='color:gray'>change {commit.short} · {when} · "
                           f"{html.escape(', '.join(files) or 'no files')}</span>{body}")

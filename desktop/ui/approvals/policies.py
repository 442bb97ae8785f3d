"""Settings' say over each tool (`approvals.tools`): run it as it decides itself, or always allow it, always
ask, or refuse it; and the switch "Ask before every command", which is `exec` set to ask, so even a command
the sandbox contains waits for a yes.

The table lists the tools registered now (an MCP tool as "server · tool", as the chat names its calls) and
any tool config.yaml sets that is not registered now (a server switched off), so every setting in force can
be seen and undone. The Settings window loads and saves it with its other fields; the approvals gate reads
the section on every call, so a saved choice holds from the next call on."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.approvals import DECISIONS
from desktop.approvals.settings import ApprovalsConfig
from desktop.config import Config
from desktop.ui.form_widgets import note_label, wheel_needs_focus, with_note

COMMANDS = "exec"  # the tool that runs shell commands
USUAL = ""  # not in approvals.tools: the tool decides (the sandbox and the path guard contain what they can)
CHOICES = (("As the tool decides", USUAL), ("Allow", "allow"), ("Ask first", "ask"), ("Deny", "deny"))
USUAL_NOTE = ("“As the tool decides”: the sandbox and the workspace folder contain what they can, and the assistant "
              "asks for the rest (commands where the sandbox does not run, MCP tools until you trust their server).")
SHOWN_ROWS = 7  # the table's height in rows; more scroll inside it


class ToolPolicies(QWidget):
    """The per-tool table; `every_command_row` is the exec switch, placed by the window with the commands' rows
    (and USUAL_NOTE goes under the table)."""

    def __init__(self, tools: Callable[[], list[tuple[str, str]]] | None = None,
                 parent: QWidget | None = None) -> None:
        """`tools`: the registered tools as (name, label), asked again each time the table is shown (an MCP
        server may have connected since)."""
        super().__init__(parent)
        self._tools = tools or (lambda: [])
        self._chosen: dict[str, str] = {}  # tool name -> allow, ask or deny; absent: as the tool decides
        self._labels: dict[str, str] = {}
        self.combos: dict[str, QComboBox] = {}

        self.every_command = QCheckBox("Ask before every command")
        self.every_command.toggled.connect(self._every_command_toggled)
        self.every_command_row = with_note(self.every_command, note_label(
            "Every shell command waits for your yes, even one the sandbox contains. Commands you chose "
            "“Always allow” for still run."))

        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["Tool", "When the assistant uses it"])
        rows = self.table.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(QComboBox().sizeHint().height() + 2)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setShowGrid(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        # One height from the start: a table that grew once shown would overlap what is under it in the form.
        self.table.setFixedHeight(header.sizeHint().height() + SHOWN_ROWS * rows.defaultSectionSize()
                                  + 2 * self.table.frameWidth())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.table)

    def load(self, config: Config) -> None:
        """Show what config.yaml sets (a value other than allow, ask or deny asks, so it shows as ask)."""
        self._chosen = {name: value if value in DECISIONS else "ask"
                        for name, value in config.section(ApprovalsConfig).tools.items()}
        self._fill()

    def apply_to(self, config: Config) -> None:
        config.section(ApprovalsConfig).tools = dict(self._chosen)

    def decision(self, tool: str) -> str:
        """What the table says for `tool`: allow, ask, deny, or "" for as the tool decides."""
        return self._chosen.get(tool, USUAL)

    def choose(self, tool: str, decision: str) -> None:
        """Set `tool` as a person would with its row's list."""
        self.combos[tool].setCurrentIndex(self.combos[tool].findData(decision))

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self._fill()  # an MCP server may have connected (or gone) since the window opened

    def _fill(self) -> None:
        self._labels = dict(self._tools())
        names = list(self._labels) + sorted(name for name in self._chosen if name not in self._labels)
        self.table.setRowCount(len(names))
        self.combos = {}
        for row, name in enumerate(names):
            item = QTableWidgetItem(self._labels.get(name, name))
            item.setToolTip(name if name in self._labels else f"{name} (not loaded now)")
            self.table.setItem(row, 0, item)
            combo = QComboBox()
            for label, value in CHOICES:
                combo.addItem(label, value)
            combo.setCurrentIndex(combo.findData(self.decision(name)))
            combo.currentIndexChanged.connect(lambda _i, name=name, combo=combo: self._set(name, combo.currentData()))
            self.table.setCellWidget(row, 1, combo)
            self.combos[name] = combo
        wheel_needs_focus(self.table)  # scrolling the table or the page past a row leaves its choice alone
        self._show_switch()

    def _set(self, tool: str, decision: str) -> None:
        if decision == USUAL:
            self._chosen.pop(tool, None)
        else:
            self._chosen[tool] = decision
        if tool == COMMANDS:
            self._show_switch()

    def _every_command_toggled(self, on: bool) -> None:
        if on == (self.decision(COMMANDS) == "ask"):
            return  # the table said so already
        if COMMANDS in self.combos:
            self.choose(COMMANDS, "ask" if on else USUAL)
        else:
            self._set(COMMANDS, "ask" if on else USUAL)

    def _show_switch(self) -> None:
        self.every_command.blockSignals(True)
        self.every_command.setChecked(self.decision(COMMANDS) == "ask")
        self.every_command.blockSignals(False)

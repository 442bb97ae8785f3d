"""The Settings window: model and key, how answers are made, tools, MCP servers, workspace, hotkey,
schedules, autostart, notifications.

Save writes config.yaml atomically and switches the running core to it, so nothing needs a restart.
A config.yaml that had problems is only replaced after the user agrees, and a copy of it is kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.config import BOUNDS, Config
from desktop.kernel.taskset import spawn
from desktop.tools.sandbox import SandboxMode
from desktop.tools.sandbox_network import HOST, INTERNET, OFF
from desktop.tools.shell import MAX_TIMEOUT
from desktop.ui import hotkey
from desktop.ui.approval_rules import ApprovalRules
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import (
    ERROR_COLOUR,
    OK_COLOUR,
    WARN_COLOUR,
    heading,
    note_label,
    save_edited_config,
    set_note,
    with_note,
)
from desktop.ui.mcp_servers import McpServersPage
from desktop.ui.model_form import ModelForm

STYLE = """
#banner { background: #fff4d6; color: #5c4400; border: 1px solid #e8cf8a; border-radius: 4px; padding: 8px; }
"""


class SettingsWindow(QWidget):
    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.bridge = bridge
        self._autostart_was: bool | None = None
        self.setWindowTitle("Settings — Nanobot Tray")
        self.setStyleSheet(STYLE)
        self.resize(660, 560)

        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.tabs = QTabWidget()
        self.model_form = ModelForm()
        self.tabs.addTab(_page(self.model_form, "Which model answers, and how to reach it."), "Model")
        self.tabs.addTab(self._answers_page(), "Answers")
        self.tabs.addTab(self._tools_page(), "Tools")
        self.mcp_servers = McpServersPage(bridge)
        self.tabs.addTab(_page(self.mcp_servers, "Programs and services that give the assistant more tools "
                               "(MCP servers). Changes here take effect at once.", stretch=False), "MCP servers")
        self.tabs.addTab(self._general_page(), "General")

        self.status = QLabel()
        self.status.setWordWrap(True)
        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(lambda: spawn(self.save()))
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        footer = QHBoxLayout()
        footer.addWidget(self.status, 1)
        footer.addWidget(close)
        footer.addWidget(self.save_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 14, 14, 12)
        layout.addWidget(self.banner)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(footer)

    def _answers_page(self) -> QWidget:
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.0, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setDecimals(2)
        self.temperature.setMaximumWidth(140)
        self.max_tokens = _tokens_box(1, 1_000_000)
        self.context_window = _tokens_box(1, 10_000_000)
        form = _form()
        form.addRow("Temperature", with_note(self.temperature, note_label(
            "Lower is more focused and repeatable, higher more varied (0 to 2).")))
        form.addRow("Longest answer", self.max_tokens)
        form.addRow("Context window", with_note(self.context_window, note_label(
            "How much of the conversation the model can read at once; older parts are summarised into "
            "memory to stay within it.")))
        return _page(_holder(form), "How the model answers.")

    def _tools_page(self) -> QWidget:
        self.restrict = QCheckBox("Keep file and shell tools inside the workspace folder")
        self.exec_timeout = QSpinBox()
        self.exec_timeout.setRange(1, MAX_TIMEOUT)
        self.exec_timeout.setSuffix(" s")
        self.exec_timeout.setMaximumWidth(140)
        self.max_processes = _limit_box("tools.exec.max_processes", " processes")
        self.max_memory = _limit_box("tools.exec.max_memory_mb", " MB")
        self.max_file = _limit_box("tools.exec.max_file_mb", " MB")
        self.command_mode = note_label()
        self.network = QComboBox()
        self.network.addItem("Public internet only", INTERNET)
        self.network.addItem("No network", OFF)
        self.network.addItem("This computer's network (not recommended)", HOST)
        self.network_mode = note_label()
        self.search_provider = QComboBox()
        self.search_provider.addItem("DuckDuckGo (no key needed)", "duckduckgo")
        self.search_provider.addItem("Brave Search (needs a key)", "brave")
        form = _form()
        form.addRow(heading("Files and commands"))
        form.addRow(with_note(self.restrict, note_label(
            "When off, the assistant may read, change and run things anywhere your user account can.")))
        form.addRow("Stop a command after", self.exec_timeout)
        form.addRow("Processes per command", self.max_processes)
        form.addRow("Memory per process", self.max_memory)
        form.addRow("Largest file it writes", with_note(self.max_file, note_label(
            "For a command and everything it starts: a runaway stops at these limits, and the chat says which.")))
        form.addRow("Shell commands", self.command_mode)
        form.addRow("Network for commands", with_note(self.network, self.network_mode))
        form.addRow(heading("Web"))
        form.addRow("Search with", with_note(self.search_provider, note_label(
            "Brave Search needs its API key in the keyring: nanobot-tray keys set brave")))
        self.approval_rules = ApprovalRules(self.bridge)
        form.addRow(heading("Allowed without asking"))
        form.addRow(self.approval_rules)
        return _page(_holder(form), "What the assistant may do on your computer and on the web.")

    def _general_page(self) -> QWidget:
        self.workspace = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.workspace, 1)
        row.addWidget(browse)
        self.hotkey = QKeySequenceEdit()
        self.hotkey.setMaximumSequenceLength(1)
        self.hotkey.setClearButtonEnabled(True)
        self.hotkey_note = note_label()
        self.dream = _minutes_box()
        self.heartbeat = _minutes_box()
        self.autostart = QCheckBox("Start Nanobot Tray when I log in")
        self.notifications = QCheckBox("Show desktop notifications (background answers, reminders, memory updates)")

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setVerticalSpacing(8)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(heading("Workspace"))
        form.addRow("Folder", with_note(row, note_label(
            "Memory, skills and the assistant's files live here. Another folder takes effect at once; "
            "the old one is left untouched.")))
        form.addRow(heading("Quick prompt"))
        form.addRow("Global hotkey", with_note(self.hotkey, self.hotkey_note))
        form.addRow(heading("Background work"))
        form.addRow("Dream (tidy memory) every", self.dream)
        form.addRow("Heartbeat (HEARTBEAT.md) every", self.heartbeat)
        form.addRow(heading("Desktop"))
        form.addRow(self.autostart)
        form.addRow(self.notifications)
        holder = QWidget()
        holder.setLayout(form)
        return _page(holder, "Where the assistant works and how it reaches you.")

    # ----- load
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        spawn(self.reload())

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        event.ignore()
        self.hide()

    async def reload(self) -> None:
        """Show what config.yaml holds now (it may have been edited by hand)."""
        from desktop import autostart  # lazy: only Settings needs it

        self.autostart.setEnabled(False)  # until its current state is known
        loaded = await self.bridge.read_settings()
        self._show_problems(loaded.problems)
        self.load(loaded.config)
        self._show_command_mode(await self.bridge.command_mode())
        self._autostart_was = await asyncio.to_thread(autostart.is_enabled)
        self.autostart.setChecked(self._autostart_was)
        self.autostart.setEnabled(autostart.is_supported())
        if not autostart.is_supported():
            self.autostart.setToolTip("Only supported on Linux desktops so far")

    def load(self, config: Config) -> None:
        self.model_form.load(config)
        self.workspace.setText(config.workspace or "")
        self.workspace.setPlaceholderText(str(self.bridge.default_workspace))
        self.hotkey.setKeySequence(QKeySequence.fromString(config.hotkey.replace("Super", "Meta"),
                                                           QKeySequence.SequenceFormat.PortableText))
        status = hotkey.current_status(config.hotkey)
        self.hotkey_note.setText(status.message[:1].upper() + status.message[1:]
                                 + (f". {status.hint}" if status.hint else ""))
        self.dream.setValue(config.schedules.dream_interval // 60)
        self.heartbeat.setValue(config.schedules.heartbeat_interval // 60)
        self.notifications.setChecked(config.notifications)
        self.temperature.setValue(config.temperature)
        self.max_tokens.setValue(config.max_tokens)
        self.context_window.setValue(config.context_window_tokens)
        self.restrict.setChecked(config.tools.restrict_to_workspace)
        self.exec_timeout.setValue(config.tools.exec.timeout)
        self.max_processes.setValue(config.tools.exec.max_processes)
        self.max_memory.setValue(config.tools.exec.max_memory_mb)
        self.max_file.setValue(config.tools.exec.max_file_mb)
        self.network.setCurrentIndex(max(self.network.findData(config.tools.exec.network), 0))
        self.approval_rules.load(config)
        found = self.search_provider.findData(config.tools.web.search_provider)
        self.search_provider.setCurrentIndex(max(found, 0))
        self.status.clear()

    def _show_command_mode(self, mode: SandboxMode | None) -> None:
        """How commands are contained and what network is in force (a warning when it is more than the
        default lets through, or less than was asked for)."""
        if mode is None:
            self.command_mode.setText("The exec tool is not loaded.")
            self.network_mode.clear()
            return
        self.command_mode.setText(mode.description[:1].upper() + mode.description[1:] + ".")
        network = mode.network
        set_note(self.network_mode, ("Warning: " if network.warning else "In force: ") + network.description + ".",
                 WARN_COLOUR if network.warning else None)

    def _show_problems(self, problems: list[str]) -> None:
        self.banner.setVisible(bool(problems))
        if problems:
            shown = "\n".join(f"• {p}" for p in problems[:5]) + ("\n• …" if len(problems) > 5 else "")
            self.banner.setText(f"config.yaml has problems; defaults are used for these settings:\n{shown}")

    # ----- save
    def form_config(self, config: Config) -> str | None:
        """Put the form's values into `config`; a message says which value is wrong."""
        wrong = self.model_form.problem()
        if wrong:
            return wrong
        self.model_form.apply_to(config)
        config.temperature = round(self.temperature.value(), 2)
        config.max_tokens = self.max_tokens.value()
        config.context_window_tokens = self.context_window.value()
        if config.max_tokens >= config.context_window_tokens:
            return "The longest answer must be shorter than the context window."
        config.tools.restrict_to_workspace = self.restrict.isChecked()
        config.tools.exec.timeout = self.exec_timeout.value()
        config.tools.exec.max_processes = self.max_processes.value()
        config.tools.exec.max_memory_mb = self.max_memory.value()
        config.tools.exec.max_file_mb = self.max_file.value()
        config.tools.exec.network = str(self.network.currentData())
        config.tools.web.search_provider = str(self.search_provider.currentData())
        folder = self.workspace.text().strip()
        if folder and not Path(folder).expanduser().is_absolute():
            return f"The workspace folder must be a full path, e.g. {Path.home() / 'Nanobot'}"
        if folder and Path(folder).expanduser().is_file():
            return f"The workspace must be a folder; {folder} is a file."
        config.workspace = folder or None
        chord = self.hotkey.keySequence().toString(QKeySequence.SequenceFormat.PortableText).replace("Meta", "Super")
        try:
            hotkey.parse_chord(chord)
        except ValueError as exc:
            return f"Hotkey: {exc}"
        config.hotkey = chord
        config.schedules.dream_interval = self.dream.value() * 60
        config.schedules.heartbeat_interval = self.heartbeat.value() * 60
        config.notifications = self.notifications.isChecked()
        return None

    async def save(self) -> None:
        self.save_button.setEnabled(False)
        try:
            await self._save()
        finally:
            self.save_button.setEnabled(True)

    async def _save(self) -> None:
        saved, message = await save_edited_config(self, self.bridge, self.form_config)
        if not saved:
            self._say(message, ERROR_COLOUR)
            return
        self._show_problems([])
        self._show_command_mode(await self.bridge.command_mode())
        problem = await self.model_form.store_typed_key()
        problem = problem or await self._apply_autostart()
        if problem:
            self._say(f"{message} But: {problem}", ERROR_COLOUR)
        else:
            self._say(message, OK_COLOUR)

    async def _apply_autostart(self) -> str | None:
        wanted = self.autostart.isChecked()
        if self._autostart_was is None or wanted == self._autostart_was:
            return None
        from desktop import autostart

        try:
            await asyncio.to_thread(autostart.set_enabled, wanted)
        except OSError as exc:
            return f"starting at login could not be changed ({exc})."
        self._autostart_was = wanted
        return None

    def _browse(self) -> None:
        dialog = QFileDialog(self, "Choose the workspace folder",
                             self.workspace.text() or self.workspace.placeholderText())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.workspace.setText)
        dialog.open()

    def _say(self, text: str, colour: str) -> None:
        set_note(self.status, text, colour)


def _page(content: QWidget, caption: str, stretch: bool = True) -> QWidget:
    """`stretch`: the content stays its natural height (else it takes the page's height, e.g. to scroll)."""
    page = QWidget()
    layout = QVBoxLayout(page)
    layout.setContentsMargins(18, 14, 18, 14)
    layout.setSpacing(14)
    layout.addWidget(note_label(caption))
    layout.addWidget(content, 0 if stretch else 1)
    if stretch:
        layout.addStretch(1)
    return page


def _form() -> QFormLayout:
    form = QFormLayout()
    form.setContentsMargins(0, 0, 0, 0)
    form.setVerticalSpacing(8)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


def _holder(form: QFormLayout) -> QWidget:
    holder = QWidget()
    holder.setLayout(form)
    return holder


def _tokens_box(low: int, high: int) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setSuffix(" tokens")
    box.setGroupSeparatorShown(True)
    box.setMaximumWidth(180)
    return box


def _limit_box(key: str, suffix: str) -> QSpinBox:
    """A limit on exec, from the lowest value config.py allows."""
    box = QSpinBox()
    box.setRange(int(BOUNDS[key].low or 1), 1_000_000_000)
    box.setSuffix(suffix)
    box.setGroupSeparatorShown(True)
    box.setMaximumWidth(180)
    return box


def _minutes_box() -> QSpinBox:
    """Minutes between runs of background work; 0 shows as "Off" (and is saved as 0, which turns it off)."""
    box = QSpinBox()
    box.setRange(0, 7 * 24 * 60)
    box.setSpecialValueText("Off")
    box.setSuffix(" min")
    box.setMaximumWidth(140)
    return box

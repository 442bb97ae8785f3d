"""The Settings window: model and key, how answers are made, tools, the features' own pages (MCP servers),
workspace, hotkey, schedules, autostart, notifications.

A simple setting (true or false, a number, one of a few choices, text) gets its row from its declaration
(desktop/config.py; the rows are desktop/ui/setting_rows.py): label, help, bounds, unit and choices come from
there, so the window and config.yaml never disagree; this module only says which keys go on which page. The
model form, the approval rules, the per-tool approvals, the workspace folder and the hotkey are widgets of their
own. A feature whose section holds only simple settings gets its page without a line here:
`host.add_settings_page(title, caption, lambda: SettingsGroup("key"))` in its `attach_ui` (desktop/ui/host.py);
the window loads and saves that page's rows with its own.

What Save does is desktop/ui/settings_save.py, the window's base class: this module builds the pages, shows
config.yaml in them, follows it and closes the window. A config.yaml that cannot be read at all shows (and
saves) the settings in force, never defaults.

The window follows config.yaml while it is open (a hand edit, a card's "Always allow", the command line):
with nothing changed in it, it shows the file anew; with changes of the person's own, it says the file
changed and keeps them. Either way Save writes only the keys the person changed here. Closing with unsaved
changes asks first, also for a page that saves itself (Personalisation), which Save saves too; closing while
a save is under way waits for it instead (closed once saved, open with the refusal if not)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from desktop.config import Config, by_key, lookup, value_at
from desktop.kernel.taskset import spawn
from desktop.settings import edited_keys
from desktop.tools import Tools
from desktop.tools.sandbox import SandboxMode
from desktop.ui import hotkey
from desktop.ui.approvals.policies import USUAL_NOTE, ToolPolicies
from desktop.ui.approvals.rules import ApprovalRules
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import (
    WARN_COLOUR,
    heading,
    note_label,
    set_note,
    wheel_needs_focus,
    with_note,
)
from desktop.ui.model_form import ModelForm
from desktop.ui.save_question import Choice, ask_to_save
from desktop.ui.setting_rows import SettingRow, SettingsGroup, add_row, form_layout
from desktop.ui.settings_pages import SettingsPages
from desktop.ui.settings_save import SavesItself, SettingsSave

STYLE = """
#banner, #stale { background: #fff4d6; color: #5c4400; border: 1px solid #e8cf8a; border-radius: 4px; padding: 8px; }
"""
STALE = ("config.yaml changed since you opened Settings. Save writes only what you changed here on top of it; "
         "the other values shown here may be older than the file's. Close and discard your changes to see the "
         "file's settings.")


class SettingsWindow(SettingsSave):
    def __init__(self, bridge: CoreBridge, pages: Sequence[tuple[str, str, Callable[[], QWidget]]] = (),
                 tools: Tools | None = None, parent: QWidget | None = None) -> None:
        """`pages`: the features' own pages (title, caption, build), shown between Tools and General;
        `tools`: the Tools service (how shell commands are contained here, which tools there are)."""
        super().__init__(parent, Qt.WindowType.Window)
        self.bridge = bridge
        self._tools = tools
        self._autostart_was: bool | None = None
        self.rows: dict[str, SettingRow] = {}  # the simple settings shown, by dotted key
        self._shown: Config | None = None  # config.yaml as the form last showed it
        self._first_shown = asyncio.Event()  # until then the form's fields are empty, not the person's settings
        self._untouched = Config()  # `_shown` as the form gives it back before anyone changes a field
        self._asking: QMessageBox | None = None  # "Save your changes?" while it is open
        self.setWindowTitle("Settings — Nanobot Tray")
        self.setStyleSheet(STYLE)
        self.resize(780, 560)

        self.banner = QLabel()
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.hide()
        self.stale = QLabel(STALE)
        self.stale.setObjectName("stale")
        self.stale.setWordWrap(True)
        self.stale.hide()
        self.tabs = SettingsPages()  # the pages' names in a list on the left: as tabs they would not fit in a row
        self.model_form = ModelForm()
        self.tabs.addTab(_page(self.model_form, "Which model answers, and how to reach it."), "Model")
        self.tabs.addTab(self._answers_page(), "Answers")
        self.tabs.addTab(self._tools_page(), "Tools")
        self._own_saves: list[tuple[str, SavesItself]] = []  # pages that save themselves, by title
        for title, caption, build in pages:
            built = build()
            if isinstance(built, SettingsGroup):
                self.rows.update(built.rows)
            if isinstance(built, SavesItself):
                self._own_saves.append((title, built))
            shown = _scrolled(built) if isinstance(built, SettingsGroup) else built  # rows with notes: never squeezed
            self.tabs.addTab(_page(shown, caption, stretch=False), title)
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
        layout.addWidget(self.stale)
        layout.addWidget(self.tabs, 1)
        layout.addLayout(footer)
        wheel_needs_focus(self)
        unfollow = bridge.settings.follow(self._file_changed)
        self.destroyed.connect(lambda: unfollow())

    def show_page(self, title: str) -> bool:
        """Bring the page called `title` to the front (a feature's page: "Voice"); False when there is none."""
        index = next((i for i in range(self.tabs.count()) if self.tabs.tabText(i) == title), -1)
        if index >= 0:
            self.tabs.setCurrentIndex(index)
        return index >= 0

    def _answers_page(self) -> QWidget:
        form = form_layout()
        self._row(form, "temperature", note=True)
        self._row(form, "max_tokens")
        self._row(form, "context_window_tokens", note=True)
        return _page(_scrolled(_holder(form)), "How the model answers.", stretch=False)

    def _tools_page(self) -> QWidget:
        self.command_mode = note_label()
        self.network_mode = note_label()
        form = form_layout()
        form.addRow(heading("Files and commands"))
        self._row(form, "tools.restrict_to_workspace", note=True)
        self._row(form, "tools.exec.timeout")
        self._row(form, "tools.exec.max_processes")
        self._row(form, "tools.exec.max_memory_mb")
        self._row(form, "tools.exec.max_file_mb", note=note_label(
            "For a command and everything it starts: a runaway stops at these limits, and the chat says which."))
        form.addRow("Shell commands", self.command_mode)
        self.tool_policies = ToolPolicies(self._tools.named if self._tools else None)
        form.addRow(self.tool_policies.every_command_row)
        self._row(form, "tools.exec.network", note=self.network_mode)
        form.addRow(heading("Web"))
        self._row(form, "tools.web.search_provider", note=True)
        self.approval_rules = ApprovalRules(self.bridge)
        # Under the form, not rows of it: QFormLayout gives a spanning row of fixed height less than it needs
        # once wrapped notes above it ask for their height, and the table then covers what follows it.
        content = QWidget()
        column = QVBoxLayout(content)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(8)
        column.addLayout(form)
        for part in (heading("Each tool"), self.tool_policies, note_label(USUAL_NOTE),
                     heading("Allowed without asking"), self.approval_rules):
            column.addWidget(part)
        return _page(_scrolled(content), "What the assistant may do on your computer and on the web.", stretch=False)

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
        self.autostart = QCheckBox("Start Nanobot Tray when I log in")

        form = form_layout()
        form.addRow(heading("Workspace"))
        form.addRow("Folder", with_note(row, note_label(
            "Memory, skills and the assistant's files live here. Another folder takes effect at once; "
            "the old one is left untouched.")))
        form.addRow(heading("Quick prompt"))
        form.addRow("Global hotkey", with_note(self.hotkey, self.hotkey_note))
        form.addRow(heading("Background work"))
        self._row(form, "schedules.dream_interval")
        self._row(form, "schedules.heartbeat_interval")
        self._row(form, "schedules.heartbeat_allow", note=True)  # free text: what to write in it
        self._row(form, "schedules.keep_awake")
        form.addRow(heading("Desktop"))
        form.addRow(self.autostart)
        self._row(form, "notifications")
        return _page(_scrolled(_holder(form)), "Where the assistant works and how it reaches you.", stretch=False)

    def _row(self, form: QFormLayout, key: str, note: QLabel | bool = False) -> None:
        """Add the generated row of a simple setting; `note`: its help under it (True) or this label."""
        self.rows[key] = add_row(form, key, note)

    # ----- load
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        spawn(self.reload())

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        """Close (the button, Esc, the title bar) hides the window, asking first when it holds changes."""
        event.ignore()
        if self.isVisible() and self._save_under_way is not None:
            spawn(self._close_after(self._save_under_way))
        elif self.isVisible() and self.unsaved():
            self._ask_to_save()
        else:
            self.hide()

    async def _close_after(self, save: asyncio.Future[bool]) -> None:
        """Close once the save under way ends: its changes are not to be asked about. Saved, the window closes
        (asking only about what was changed since); refused, it stays open with the refusal."""
        if await asyncio.shield(save) and isValid(self):  # shielded: a cancelled wait leaves the save be
            self.close()

    def _ask_to_save(self) -> None:
        if self._asking is None:
            self._asking = ask_to_save(self, "Settings changed in this window are not saved yet: "
                                       + ", ".join(self.unsaved()) + ".", self._close_answered)

    def _close_answered(self, answer: Choice) -> None:
        self._asking = None
        if answer == Choice.Save:
            spawn(self._save_and_close())
        elif answer == Choice.Discard:
            self.hide()  # shown again, it reads the file anew

    async def _save_and_close(self) -> None:
        if await self.save():
            self.hide()

    def unsaved(self) -> list[str]:
        """What the person changed here and has not saved, by label: empty when nothing."""
        labels: list[str] = []
        if self._shown is not None:  # before config.yaml is read, the form holds nothing of the person's
            now, _wrong = self._form_values()
            labels += [lookup(key).setting.label for key in sorted(edited_keys(self._untouched, now))]
            if self.model_form.key.text().strip():
                labels.append("API key")
            if self._autostart_was is not None and self.autostart.isChecked() != self._autostart_was:
                labels.append("Start at login")
        for _title, page in self._own_saves:  # pages read their own files, and may be typed in first
            labels += page.unsaved()
        return labels

    def _file_changed(self) -> None:
        """The settings writer saved, updated or re-read config.yaml."""
        if self.isVisible() and not self._saving:
            spawn(self._follow_file())

    async def _follow_file(self) -> None:
        """Show a new problem at once; show the file anew, or with changes of the person's own say it changed."""
        loaded = await self.bridge.settings.read()
        if self._saving or self._shown is None or not self.isVisible():
            return
        self._show_problems(loaded.problems, loaded.unreadable)
        if by_key(loaded.config) == by_key(self._shown):
            return
        if self.unsaved():
            self.stale.show()
        else:
            await self.reload()

    async def reload(self) -> None:
        """Show what config.yaml holds now (it may have been edited by hand)."""
        from desktop import autostart  # lazy: only Settings needs it

        self.autostart.setEnabled(False)  # until its current state is known
        loaded = await self.bridge.settings.read()
        if not isValid(self):
            return  # the window went while the file was read (the app quitting)
        self._show_problems(loaded.problems, loaded.unreadable)
        self.load(loaded.config)
        mode = await self._tools.command_mode() if self._tools else None
        if not isValid(self):
            return
        self._show_command_mode(mode)
        autostart_was = await asyncio.to_thread(autostart.is_enabled)
        if not isValid(self):
            return
        self._autostart_was = autostart_was
        self.autostart.setChecked(self._autostart_was)
        self.autostart.setEnabled(autostart.is_supported())
        if not autostart.is_supported():
            self.autostart.setToolTip("Only supported on Linux desktops so far")
        for form in self.findChildren(QFormLayout):
            form.invalidate()  # its first pass kept notes at the heights they had before their text: clipped

    def load(self, config: Config) -> None:
        self.model_form.load(config)
        self.workspace.setText(config.workspace or "")
        self.workspace.setPlaceholderText(str(self.bridge.default_workspace))
        self.hotkey.setKeySequence(QKeySequence.fromString(config.hotkey.replace("Super", "Meta"),
                                                           QKeySequence.SequenceFormat.PortableText))
        status = hotkey.current_status(config.hotkey)
        self.hotkey_note.setText(status.message[:1].upper() + status.message[1:]
                                 + (f". {status.hint}" if status.hint else ""))
        for key, row in self.rows.items():
            row.show(value_at(config, key))
        self.tool_policies.load(config)
        self.approval_rules.load(config)
        self.status.clear()
        self.stale.hide()
        self._shown = copy.deepcopy(config)
        self._untouched = self._form_values()[0]
        self._first_shown.set()

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

    def _show_problems(self, problems: list[str], unreadable: bool = False) -> None:
        """What is wrong with config.yaml, by line. A file that cannot be read at all changes nothing in force:
        the form shows the settings the app uses, and saving writes them (the file is kept as a copy)."""
        self.banner.setVisible(bool(problems))
        if not problems:
            return
        shown = "\n".join(f"• {p}" for p in problems[:5]) + ("\n• …" if len(problems) > 5 else "")
        if unreadable:
            self.banner.setText(f"config.yaml could not be read:\n{shown}\nThe app goes on with the settings shown "
                                "here until the file is fixed. Fix that line in the file, or save here to replace "
                                "the file with these settings (your file is kept as a copy next to it).")
        else:
            self.banner.setText(f"config.yaml has problems; defaults are used for these settings:\n{shown}")

    def _browse(self) -> None:
        dialog = QFileDialog(self, "Choose the workspace folder",
                             self.workspace.text() or self.workspace.placeholderText())
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(self.workspace.setText)
        dialog.open()


def show_settings_page(title: str) -> bool:
    """Turn the open Settings window to its `title` page: for a window that has just asked the app for Settings
    (its `settings_requested`) and knows which page holds the cure."""
    return any(widget.show_page(title) for widget in QApplication.topLevelWidgets()
               if isinstance(widget, SettingsWindow) and widget.isVisible())


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


def _scrolled(content: QWidget) -> QScrollArea:
    """A page's content that scrolls when the window is shorter than it (rather than squeezing its notes)."""
    area = QScrollArea()
    area.setWidget(content)
    area.setWidgetResizable(True)
    content.setAutoFillBackground(False)  # the page's own background, as on the pages that do not scroll
    area.viewport().setAutoFillBackground(False)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


def _holder(form: QFormLayout) -> QWidget:
    holder = QWidget()
    holder.setLayout(form)
    return holder

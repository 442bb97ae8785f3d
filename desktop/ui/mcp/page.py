"""Settings' MCP servers page: each configured server with its live state, and ways to add, change, test,
trust, switch off, remove and import them.

Every change is written at once through the settings writer (not by Settings' Save button), so the
running app connects, stops or restarts just that server. States follow the bus (McpServerChanged)."""

from __future__ import annotations

import asyncio
import dataclasses
import html
import shlex
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase, QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.config import lookup
from desktop.kernel.secrets import KeyringUnavailable
from desktop.kernel.taskset import spawn
from desktop.mcp.events import McpServerChanged
from desktop.mcp.importer import Imported, NotAServerList, described
from desktop.mcp.manage import (
    McpStatus,
    add_imported,
    claude_desktop_file,
    is_signed_in,
    keep_secrets_in_keyring,
    preview_import,
    probe_server,
    remove_server,
    save_server,
    set_server_enabled,
    set_startup_wait,
    sign_in,
    sign_out,
    status_of,
)
from desktop.mcp.manager import McpServers
from desktop.mcp.oauth import SignInFailed
from desktop.mcp.settings import McpConfig, McpServerConfig, how_it_runs, set_trusted
from desktop.settings import SettingsError
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import ERROR_COLOUR, OK_COLOUR, confirm, note_label, set_note, with_note
from desktop.ui.setting_rows import SettingRow
from desktop.ui.skills.dialogs import run_dialog

DOT_COLOURS = {"connected": "#2f9e55", "connecting": "#d19a00", "failed": "#d9463e",
               "refused": "#d9463e"}  # others: grey
LOG_SHOWN = 64_000  # characters from the end of a server's log
WAIT_SAVED_AFTER = 600  # ms without a change to the startup wait's number before it is saved
EMPTY = "No servers yet. Add one, or import the servers Claude Desktop uses."


def describe(status: McpStatus) -> str:
    """The state in a few words, as the row shows it next to the dot."""
    if status.state == "connected":
        count = len(status.tools)
        return f"Connected · {count} tool{'s' if count != 1 else ''}"
    return {"connecting": "Connecting…", "failed": "Failed, retrying", "refused": "Refused", "disabled": "Off",
            "stopped": "Not running"}.get(status.state, status.state)


class McpServersPage(QWidget):
    def __init__(self, servers: McpServers, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        """`servers` are the running connections; `bridge` carries their settings and the bus."""
        super().__init__(parent)
        self.servers = servers
        self.bridge = bridge
        self.settings = bridge.settings
        self.rows: dict[str, ServerRow] = {}
        self.add_button = QPushButton("Add server…")
        self.add_button.clicked.connect(lambda: spawn(self.edit(None)))
        self.import_button = QPushButton("Import from Claude Desktop")
        self.import_button.hide()  # until Claude Desktop's file is found
        self.import_button.clicked.connect(lambda: spawn(self.import_claude_desktop()))
        self.import_file_button = QPushButton("Import from file…")
        self.import_file_button.setToolTip("Claude Desktop's, Cursor's or VS Code's JSON file (mcp.json), Goose's "
                                           "config.yaml, or a server's README snippet; you see what it adds first")
        self.import_file_button.clicked.connect(lambda: spawn(self.import_file()))
        self.message = note_label()
        self.message.hide()
        self.empty = note_label(EMPTY)
        # Saved like every change here, at once (once the number has stayed put for a moment)
        self.startup_wait = SettingRow(lookup("mcp.startup_wait"))
        self._wait_saver = QTimer(self, singleShot=True, interval=WAIT_SAVED_AFTER)
        self._wait_saver.timeout.connect(lambda: spawn(self.save_startup_wait()))
        box = self.startup_wait.widget
        assert isinstance(box, QDoubleSpinBox)  # a number of seconds
        box.valueChanged.connect(lambda _value: self._wait_saver.start())

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.import_button)
        buttons.addWidget(self.import_file_button)
        buttons.addStretch(1)
        holder = QWidget()
        self._list = QVBoxLayout(holder)
        self._list.setContentsMargins(0, 0, 4, 0)
        self._list.setSpacing(8)
        self._list.addWidget(self.empty)
        self._list.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(holder)
        scroll.viewport().setAutoFillBackground(False)  # the page's own background, not a grey box
        holder.setAutoFillBackground(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addWidget(scroll, 1)
        wait = QFormLayout()
        wait.addRow(self.startup_wait.spec.setting.label,
                    with_note(self.startup_wait.widget, note_label(self.startup_wait.spec.setting.help)))
        layout.addLayout(wait)

        bridge.event.connect(self._on_event)
        unsubscribe = bridge.settings.subscribe(("mcp",), self._changed)
        self.destroyed.connect(lambda: unsubscribe())

    def open_browser(self, url: str) -> None:
        """A sign-in's page, in the person's browser."""
        QDesktopServices.openUrl(QUrl(url))

    def _changed(self, _keys: frozenset[str]) -> None:
        spawn(self.reload())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        spawn(self.reload())

    async def reload(self) -> None:
        """Show the servers config.yaml lists now (it may have been edited by hand)."""
        mcp = (await self.bridge.settings.read()).config.section(McpConfig)
        self.load(mcp.servers)
        if not self._wait_saver.isActive():  # not while a number typed here waits to be saved
            widget = self.startup_wait.widget
            widget.blockSignals(True)
            self.startup_wait.show(mcp.startup_wait)
            widget.blockSignals(False)
        self.import_button.setVisible(await claude_desktop_file() is not None)

    def load(self, servers: dict[str, McpServerConfig]) -> None:
        for name in [n for n in self.rows if n not in servers]:
            self.rows.pop(name).deleteLater()
        for index, (name, server) in enumerate(servers.items()):
            row = self.rows.get(name)
            if row is None:
                row = self.rows[name] = ServerRow(self, name)
            self._list.insertWidget(index, row)  # in the file's order
            row.show_config(server)
            row.show_status(status_of(self.servers, name))
        self.empty.setVisible(not servers)

    def _on_event(self, event: object) -> None:
        if isinstance(event, McpServerChanged) and event.name in self.rows:
            self.rows[event.name].show_status(status_of(self.servers, event.name))

    async def edit(self, name: str | None) -> None:
        """Add a server (name None) or change one, in a small form; saved when the form is."""
        current = self.rows[name].server if name is not None else None
        dialog = ServerDialog(self, name, current, taken=set(self.rows) - {name or ""})
        await run_dialog(dialog)
        dialog.deleteLater()

    async def remove(self, name: str) -> None:
        if await confirm(self, "Remove server", f"Remove the MCP server “{name}”? The assistant loses its tools. "
                         "The program itself stays installed.", "Remove"):
            await self.attempt(remove_server(self.settings, name))

    async def import_claude_desktop(self) -> None:
        path = await claude_desktop_file()
        if path is None:
            self.say("Claude Desktop's settings file is gone.", ERROR_COLOUR)
            return
        await self.import_from(path)

    async def import_file(self) -> None:
        dialog = QFileDialog(self, "Import MCP servers", str(Path.home()),
                             "MCP server lists (*.json *.yaml *.yml);;All files (*)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        accepted = await run_dialog(dialog) == QDialog.DialogCode.Accepted
        chosen = dialog.selectedFiles()
        dialog.deleteLater()
        if accepted and chosen:
            await self.import_from(Path(chosen[0]))

    async def import_from(self, path: Path) -> None:
        """Show what the file would add and skip; add it once the person agrees, and say what came of it."""
        try:
            found = await preview_import(self.settings, path)
        except NotAServerList as exc:
            self.say(f"Nothing imported: {exc}", ERROR_COLOUR)
            return
        if not found.added:
            self.say(f"Nothing to import. {import_summary(found)}", None)
            return
        count = len(found.added)
        question = (f"From {found.source}'s {path.name}:\n\n" + "\n".join(described(found, done=False))
                    + "\n\nAdded servers connect at once.")
        if not await confirm(self, "Import MCP servers", question, f"Add {count} server{'s' if count != 1 else ''}"):
            return
        try:
            await add_imported(self.settings, found)
        except (SettingsError, OSError, KeyringUnavailable) as exc:
            self.say(f"Nothing imported: {exc}", ERROR_COLOUR)
            return
        self.say(import_summary(found), OK_COLOUR)

    async def save_startup_wait(self) -> None:
        seconds = self.startup_wait.value()
        if seconds != self.settings.config.section(McpConfig).startup_wait:
            await self.attempt(set_startup_wait(self.settings, seconds))

    async def attempt(self, change: Awaitable[None]) -> None:
        """Run a change through the settings writer; say why when it is refused."""
        try:
            await change
        except (SettingsError, OSError) as exc:
            self.say(f"Not changed: {exc}", ERROR_COLOUR)
            await self.reload()  # switches back to what is saved
            return
        self.message.hide()

    def say(self, text: str, colour: str | None) -> None:
        set_note(self.message, text, colour)
        self.message.show()


def import_summary(found: Imported) -> str:
    parts = []
    if found.added:
        parts.append("Added " + ", ".join(name + (f" ({found.notes[name]})" if name in found.notes else "")
                                          for name in found.added) + ".")
    if found.skipped:
        parts.append("Skipped " + "; ".join(f"{name} ({why})" for name, why in found.skipped.items()) + ".")
    return " ".join(parts) or "The file lists no servers."


class ServerRow(QFrame):
    """One server: dot, name, state and last error; On and Trusted switches; Test, View log, Edit, Remove."""

    def __init__(self, page: McpServersPage, name: str) -> None:
        super().__init__()
        self.page = page
        self.name = name
        self.server = McpServerConfig()
        self.setObjectName("server")
        self.setStyleSheet("#server { border: 1px solid palette(mid); border-radius: 6px; }")
        self.dot = QLabel("●")
        title = QLabel(f"<b>{html.escape(name)}</b>")
        self.state = QLabel()
        self.enabled = QCheckBox("On")
        self.enabled.setToolTip("Off: the server is not started and its tools are not offered")
        self.enabled.clicked.connect(lambda on: spawn(page.attempt(set_server_enabled(page.settings, name, on))))
        self.trusted = QCheckBox("Trusted")
        self.trusted.setToolTip("Its tools run without asking you first")
        self.trusted.clicked.connect(lambda on: spawn(page.attempt(set_trusted(page.settings, name, on))))
        self.command = note_label()
        self.command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.error = note_label()
        self.result = note_label()
        self.result.setTextFormat(Qt.TextFormat.PlainText)  # it lists tools as their server names them: not markup
        self.result.hide()
        self.test_button = _button("Test", self.test)
        self.log_button = _button("View log", self.view_log)
        self.signed_in = False  # a sign-in (OAuth) is stored for this remote server
        self.sign_in_state = QLabel()
        self.sign_in_button = _button("Sign in", self.sign_in_or_out)
        self.sign_in_state.hide()
        self.sign_in_button.hide()

        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(self.dot)
        top.addWidget(title)
        top.addWidget(self.state, 1)
        top.addWidget(self.enabled)
        top.addWidget(self.trusted)
        actions = QHBoxLayout()
        actions.setSpacing(6)
        self.edit_button = _button("Edit…", lambda: page.edit(name))
        self.remove_button = _button("Remove…", lambda: page.remove(name))
        for button in (self.test_button, self.log_button, self.edit_button, self.remove_button):
            actions.addWidget(button)
        actions.addStretch(1)
        actions.addWidget(self.sign_in_state)
        actions.addWidget(self.sign_in_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addWidget(self.command)
        layout.addWidget(self.error)
        layout.addLayout(actions)
        layout.addWidget(self.result)

    def show_config(self, server: McpServerConfig) -> None:
        self.server = server
        self.enabled.setChecked(server.enabled)
        self.trusted.setChecked(server.trusted)
        self.command.setText(how_it_runs(server))

    def show_status(self, status: McpStatus) -> None:
        colour = DOT_COLOURS.get(status.state, "#9a9a9a")
        self.dot.setStyleSheet(f"color: {colour};")
        self.dot.setToolTip(status.state)
        self.state.setText(describe(status))
        said = "Not started" if status.state == "refused" else "Last error"
        set_note(self.error, f"{said}: {status.error}" if status.error else "", ERROR_COLOUR)
        self.error.setVisible(bool(status.error))
        spawn(self.show_sign_in(status))

    async def show_sign_in(self, status: McpStatus) -> None:
        """Signed in or out, with the button that changes it: for a remote server that has a sign-in or wants one."""
        self.signed_in = await is_signed_in(self.name, self.server)
        own_token = any(key.lower() == "authorization" for key in self.server.headers)  # never signed in for
        wanted = not own_token and (self.signed_in or (status.error or "").startswith(("needs sign-in", "signed out")))
        self.sign_in_state.setText("Signed in" if self.signed_in else "Not signed in")
        self.sign_in_button.setText("Sign out" if self.signed_in else "Sign in…")
        self.sign_in_state.setVisible(wanted and bool(self.server.url))
        self.sign_in_button.setVisible(wanted and bool(self.server.url))

    async def sign_in_or_out(self) -> None:
        """Sign in in the browser (the server's own page), or forget the sign-in; the server reconnects either way."""
        self.sign_in_button.setEnabled(False)
        self.result.show()
        try:
            if self.signed_in:
                await sign_out(self.page.servers, self.name, self.server)
                set_note(self.result, "Signed out.", None)
            else:
                set_note(self.result, "Sign in in your browser; this waits until you have.", None)
                await sign_in(self.page.servers, self.name, self.server, self.page.open_browser)
                set_note(self.result, "Signed in.", OK_COLOUR)
        except (SignInFailed, KeyringUnavailable) as exc:
            set_note(self.result, f"{str(exc)[:1].upper()}{str(exc)[1:]}.", ERROR_COLOUR)
        finally:
            self.sign_in_button.setEnabled(True)
        await self.show_sign_in(status_of(self.page.servers, self.name))

    async def test(self) -> None:
        """Connect once, apart from the running connection, and list the tools."""
        self.test_button.setEnabled(False)
        self.result.show()
        set_note(self.result, "Testing…", None)
        try:
            status = await probe_server(self.page.servers, self.name, self.server)
        finally:
            self.test_button.setEnabled(True)
        if status.state == "connected":
            listed = ", ".join(status.tools) or "none"
            set_note(self.result, f"Works. {len(status.tools)} tools: {listed}", OK_COLOUR)
        else:
            set_note(self.result, f"Does not work: {status.error or status.state}. View log may say more.",
                     ERROR_COLOUR)

    async def view_log(self) -> None:
        path = self.page.servers.places.log_file(self.name)
        text = await asyncio.to_thread(_tail, path)
        dialog = LogDialog(self, self.name, path, text)
        await run_dialog(dialog)
        dialog.deleteLater()


class ServerDialog(QDialog):
    """Name, and either a program with its arguments and environment (stdio) or an address with its headers
    (URL). A token, key or Authorization value typed here goes to the OS keyring; config.yaml gets
    `keyring:NAME`. Settings this form does not show (timeout, tool list, trust) are kept as they were."""

    def __init__(self, page: McpServersPage, name: str | None, current: McpServerConfig | None,
                 taken: set[str]) -> None:
        super().__init__(page)
        self.page = page
        self.original = name
        self.current = current or McpServerConfig()
        self.taken = taken
        self.setWindowTitle("Edit MCP server" if name else "Add MCP server")
        self.setMinimumWidth(520)
        self.name = QLineEdit(name or "")
        self.name.setPlaceholderText("e.g. time")
        self.program = QRadioButton("Program")
        self.address = QRadioButton("Address")
        kinds = QButtonGroup(self)
        kinds.addButton(self.program)
        kinds.addButton(self.address)
        self.command = QLineEdit(how_it_runs(self.current) if self.current.command else "")
        self.command.setPlaceholderText("uvx mcp-server-time --local-timezone Europe/Berlin")
        self.url = QLineEdit(self.current.url or "")
        self.url.setPlaceholderText("https://example.com/mcp")
        self.env = _pairs_editor(self.current.env, "=", "GITHUB_TOKEN=ghp_…\nLOG_LEVEL=info")
        self.headers = _pairs_editor(self.current.headers, ": ", "Authorization: Bearer …")
        (self.address if self.current.url else self.program).setChecked(True)
        self.program.toggled.connect(self._kind_changed)
        self._kind_changed()
        self.problem = note_label()
        self.problem.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        buttons.accepted.connect(lambda: spawn(self.save()))
        buttons.rejected.connect(self.reject)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Name", self.name)
        form.addRow(self.program, self.command)
        form.addRow("Environment", self.env)
        form.addRow(self.address, self.url)
        form.addRow("Headers", self.headers)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(note_label("A program is started by the app and talks to it over stdin and stdout; "
                                    "write it as you would in a terminal. An address is a server that runs "
                                    "elsewhere (streamable HTTP, or SSE when it ends in /sse). One variable or "
                                    "header per line; tokens, keys and Authorization go to your system keyring, "
                                    "never to config.yaml."))
        layout.addWidget(self.problem)
        layout.addStretch(1)
        layout.addWidget(buttons)
        self._as_opened = self._typed()
        self._asking = False  # "Discard?" is open

    def _typed(self) -> tuple[object, ...]:
        return (self.name.text(), self.program.isChecked(), self.command.text(), self.url.text(),
                self.env.toPlainText(), self.headers.toPlainText())

    def reject(self) -> None:
        """Cancel, Esc or the title bar's close: with something typed (a command, a token) it asks first, so a key
        pressed by habit does not drop it."""
        if self._asking:
            return
        if self._typed() == self._as_opened:
            super().reject()
            return
        self._asking = True
        spawn(self._reject_if_agreed())

    async def _reject_if_agreed(self) -> None:
        try:
            discard = await confirm(self, "Discard changes?", "What you typed in this form is not saved.", "Discard")
        finally:
            self._asking = False
        if discard:
            super().reject()

    def _kind_changed(self) -> None:
        self.command.setEnabled(self.program.isChecked())
        self.env.setEnabled(self.program.isChecked())
        self.url.setEnabled(not self.program.isChecked())
        self.headers.setEnabled(not self.program.isChecked())

    def built(self) -> tuple[str, McpServerConfig] | str:
        """The name and server the form describes, or what is wrong with it."""
        name = self.name.text().strip()
        if not name:
            return "Give the server a name."
        if name in self.taken:
            return f"There is a server called “{name}” already."
        kept = self.current
        if self.program.isChecked():
            try:
                words = shlex.split(self.command.text())
            except ValueError as exc:
                return f"The command cannot be read: {exc}."
            if not words:
                return "Write the command that starts the server."
            env = _pairs(self.env.toPlainText(), "=", "variable")
            if isinstance(env, str):
                return env
            same_kind = bool(kept.command)
            server = dataclasses.replace(kept, command=words[0], args=words[1:], url=None, headers={}, env=env,
                                         cwd=kept.cwd if same_kind else None, transport=None)
        else:
            url = self.url.text().strip()
            if not url.startswith(("http://", "https://")):
                return "The address must start with http:// or https://."
            headers = _pairs(self.headers.toPlainText(), ":", "header")
            if isinstance(headers, str):
                return headers
            same_kind = bool(kept.url)
            server = dataclasses.replace(kept, url=url, command=None, args=[], env={}, cwd=None, headers=headers,
                                         transport=kept.transport if same_kind else None)
        return name, server

    async def save(self) -> None:
        made = self.built()
        if isinstance(made, str):
            self._show_problem(made)
            return
        name, server = made
        self.save_button.setEnabled(False)
        try:
            server = await keep_secrets_in_keyring(name, server)
            await save_server(self.page.settings, name, server, replacing=self.original)
        except (SettingsError, OSError, KeyringUnavailable) as exc:
            self._show_problem(f"Not saved: {exc}")
            self.save_button.setEnabled(True)
            return
        self.accept()

    def _show_problem(self, text: str) -> None:
        set_note(self.problem, text, ERROR_COLOUR)
        self.problem.show()


def _pairs_editor(values: dict[str, str], separator: str, placeholder: str) -> QPlainTextEdit:
    editor = QPlainTextEdit("\n".join(f"{k}{separator}{v}" for k, v in values.items()))
    editor.setPlaceholderText(placeholder)
    editor.setFixedHeight(editor.fontMetrics().lineSpacing() * 4 + 12)
    return editor


def _pairs(text: str, separator: str, what: str) -> dict[str, str] | str:
    """`NAME<separator>value` lines as a mapping, or what is wrong with a line."""
    pairs: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, found, value = line.partition(separator)
        if not found or not name.strip():
            return f"Line {number} of the {what}s is not NAME{separator.strip()}value: “{line.strip()}”."
        pairs[name.strip()] = value.strip()
    return pairs


class LogDialog(QDialog):
    """The end of a server's stderr log: why it failed is usually there."""

    def __init__(self, parent: QWidget, name: str, path: Path, text: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Log of {name}")
        self.resize(720, 440)
        self.text = QPlainTextEdit(text or "Nothing logged yet.")
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.moveCursor(self.text.textCursor().MoveOperation.End)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note_label(str(path)))
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            handle.seek(max(handle.tell() - LOG_SHOWN, 0))
            return handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _button(text: str, start: Callable[[], Awaitable[None]]) -> QPushButton:
    """A button that starts `start()` on the loop (its window stays responsive meanwhile)."""
    button = QPushButton(text)
    button.clicked.connect(lambda: spawn(start()))
    return button


"""Save in the Settings window: what happens when the person presses Save (or Enter, or Save on closing), kept
apart from the window's pages, its loading and its closing (desktop/ui/settings.py). It gathers every page's
values into a Config, refusing a wrong one on the page of the field to fix; checks the provider of a model name
or address changed here; asks before commands get this computer's network; stores a typed API key, then makes
the one call to the settings writer, as first-run setup does (desktop/ui/model_save.py says why in that order);
then sets starting at login and saves the pages that save themselves; and says in the status line how it went,
the pages greyed until then.

Save writes config.yaml atomically and switches the running core to it, so nothing needs a restart. It writes
only the keys the person changed in the window, on top of the file as it is then, so an edit made elsewhere
meanwhile (a hand edit, a card's "Always allow", the command line) is never undone by values the window showed
before it. A config.yaml that had problems is only replaced after the person agrees, and a copy of it is kept."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QComboBox, QMessageBox, QScrollArea, QWidget

from desktop.config import Config, set_value_at, value_at
from desktop.settings import carry_edits
from desktop.tools.sandbox_network import HOST
from desktop.ui import hotkey
from desktop.ui.form_widgets import ERROR_COLOUR, OK_COLOUR, confirm, set_note, while_greyed
from desktop.ui.hotkey.x11 import KEY_NAMES_HINT, is_key_name
from desktop.ui.model_save import save_with_key

if TYPE_CHECKING:  # the types of the window's fields that Save reads (the window's module imports this one)
    from PySide6.QtWidgets import QCheckBox, QKeySequenceEdit, QLabel, QLineEdit, QPushButton

    from desktop.tools import Tools
    from desktop.tools.sandbox import SandboxMode
    from desktop.ui.approvals.policies import ToolPolicies
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.model_form import ModelForm
    from desktop.ui.setting_rows import SettingRow
    from desktop.ui.settings_pages import SettingsPages

NETWORK = "tools.exec.network"
LONGEST_ANSWER = "The longest answer must be shorter than the context window."
DESKTOP_KEYS = "hotkeys."  # the desktop context's keys (and dictation's), each typed as a line of text
HOST_NETWORK_QUESTION = (
    "Commands the assistant runs would share this computer's network. They could then reach the services "
    "running on this computer (databases, development servers, anything on 127.0.0.1), the devices on your "
    "local network and its router, cloud metadata addresses, and the desktop's X server and D-Bus sockets, "
    "through which a command can watch your screen, type into other windows or drive other apps.\n\n"
    "“Public internet only” lets commands download what they need without any of that.")


@dataclass(frozen=True)
class Refusal:
    """Why Save is refused, and the field holding the value to fix: Save turns to its page and puts the cursor
    in it, since the message alone, under a page that does not show the field, does not say where to look."""

    message: str
    field: QWidget


@runtime_checkable
class SavesItself(Protocol):
    """A feature's page that keeps what it shows outside config.yaml (Personalisation: USER.md and SOUL.md). The
    window's Save saves it too, and Close asks first while it holds changes, as for the window's own settings."""

    def unsaved(self) -> list[str]:
        """What the person changed on the page and has not saved, by label: empty when nothing."""
        ...

    async def save(self) -> bool:
        """Save it; False when something was not saved (the page says why, and keeps the typing)."""
        ...


class SettingsSave(QWidget):
    """The Settings window's Save, as the window's base class: the save reads nearly every field of the window,
    and the window's Close and file watch read the save's state (`_save_under_way`, `_saving`). The fields
    declared first are the window's own, made by its `__init__`, its pages and its loading; the last two are the
    save's."""

    bridge: CoreBridge
    _tools: Tools | None
    tabs: SettingsPages
    status: QLabel
    stale: QLabel
    save_button: QPushButton
    model_form: ModelForm
    tool_policies: ToolPolicies
    rows: dict[str, SettingRow]
    workspace: QLineEdit
    hotkey: QKeySequenceEdit
    autostart: QCheckBox
    _autostart_was: bool | None
    _own_saves: list[tuple[str, SavesItself]]
    _shown: Config | None
    _first_shown: asyncio.Event
    _untouched: Config
    load: Callable[[Config], None]  # what was saved, shown anew when the file changed meanwhile
    _show_command_mode: Callable[[SandboxMode | None], None]  # how commands are contained once saved
    _show_problems: Callable[[list[str]], None]  # none left in the file once saved

    _saving = False  # the file is being written: its change is the window's own
    _save_under_way: asyncio.Future[bool] | None = None  # whether the save under way saved, once it ends

    def form_config(self, config: Config) -> Refusal | None:
        """Put every value of the form into `config` (a wrong one too, so a change is seen as one); a refusal
        says which value is wrong, and where (the first one found)."""
        found = self.model_form.problem_at(model_needed=bool(config.model))  # not cleared by mistake
        wrong = Refusal(*found) if found else None
        self.model_form.apply_to(config)
        self.tool_policies.apply_to(config)
        for key, row in self.rows.items():
            set_value_at(config, key, row.value())
        if config.max_tokens >= config.context_window_tokens:
            wrong = wrong or Refusal(LONGEST_ANSWER, self.rows["max_tokens"].widget)
        folder = self.workspace.text().strip()
        config.workspace = folder or None
        if folder and not Path(folder).expanduser().is_absolute():
            wrong = wrong or Refusal(f"The workspace folder must be a full path, e.g. {Path.home() / 'Nanobot'}",
                                     self.workspace)
        if folder and Path(folder).expanduser().is_file():
            wrong = wrong or Refusal(f"The workspace must be a folder; {folder} is a file.", self.workspace)
        chord = self.hotkey.keySequence().toString(QKeySequence.SequenceFormat.PortableText).replace("Meta", "Super")
        config.hotkey = chord
        try:
            hotkey.parse_chord(chord)
        except ValueError as exc:
            wrong = wrong or Refusal(f"Hotkey: {exc}", self.hotkey)
        return wrong or self._keys_problem(chord) or self._allow_problem()

    def _allow_problem(self) -> Refusal | None:
        """A name in what the heartbeat may use without asking that no tool has, or `mcp:SERVER` naming no server
        set up, would be saved and never grant anything. A server set up (on the MCP page, saved at once) is taken
        connected or not: its tools are known only once it is connected."""
        if self._tools is None:
            return None
        known = self._tools.grants()
        row = self.rows["schedules.heartbeat_allow"]
        unknown = [name for name in row.value() if name not in known and not name.startswith("mcp:")]
        if unknown:
            tools = ", ".join(name for name in known if not name.startswith("mcp:"))
            return Refusal(f"{row.spec.setting.label}: there is no tool named {', '.join(unknown)}. The tools are "
                           f"{tools}, or mcp:SERVER for an MCP server's.", row.widget)
        servers = sorted(value_at(self.bridge.settings.config, "mcp.servers"))
        absent = [name.removeprefix("mcp:") for name in row.value()
                  if name.startswith("mcp:") and name.removeprefix("mcp:") not in servers]
        if not absent:
            return None
        there = f"The servers are {', '.join(servers)}." if servers else "No MCP server is set up (MCP servers page)."
        return Refusal(f"{row.spec.setting.label}: there is no MCP server named {', '.join(absent)}. {there}",
                       row.widget)

    def _keys_problem(self, quick: str) -> Refusal | None:
        """The desktop context's keys are lines of text: each must be a chord, and no two of the app's keys the
        same (the second grab of a key fails, and is then reported as another program's)."""
        named: dict[str, tuple[str, QWidget]] = {row.spec.setting.label: (str(row.value()), row.widget)
                                                 for key, row in self.rows.items() if key.startswith(DESKTOP_KEYS)}
        named["the quick prompt's hotkey"] = quick, self.hotkey
        seen: dict[hotkey.Chord, str] = {}
        for name, (text, field) in named.items():
            try:
                chord = hotkey.parse_chord(text)
            except ValueError as exc:
                return Refusal(f"{name}: {exc}", field)
            if not is_key_name(chord.key):
                return Refusal(f"{name}: there is no key named '{text.split('+')[-1].strip()}'; {KEY_NAMES_HINT}.",
                               field)
            if chord in seen:
                return Refusal(f"{seen[chord]} and {name} are both {chord}: give each its own key.", field)
            seen[chord] = name
        return None

    def _form_values(self) -> tuple[Config, Refusal | None]:
        """The config the form shows: what it last showed, with every field's value put in."""
        config = copy.deepcopy(self._shown) if self._shown is not None else Config()
        return config, self.form_config(config)

    async def save(self) -> bool:
        """Save the person's changes; False when nothing was saved (the status line says why). The pages are greyed
        until it is done: it can wait long (the model helper starting, the keyring's password prompt open), and a
        value typed meanwhile would be neither saved nor counted as unsaved. The cursor goes back where it was."""
        self.save_button.setEnabled(False)
        outcome = self._save_under_way = asyncio.get_running_loop().create_future()
        saved = False
        try:
            saved = await while_greyed(self.tabs, self._save())
            return saved
        finally:
            self._save_under_way = None
            outcome.set_result(saved)
            self.save_button.setEnabled(True)

    async def _save(self) -> bool:
        await self._first_shown.wait()  # Save (Enter, or on closing) in a window still reading config.yaml
        edited, wrong = self._form_values()
        wrong = wrong or await self._unnamed_provider(edited)
        if wrong:
            self._refuse(wrong)
            return False
        if not await self._host_network_agreed(edited):
            return False
        written: list[Config] = []

        def edit(current: Config) -> str | None:
            # config.yaml is read, the key stored: from here the writer tells the window of its own save, not a
            # change made elsewhere (one made while the keyring's prompt was open is in `current`, and was followed)
            self._saving = True
            carry_edits(self._untouched, edited, current)
            if current.max_tokens >= current.context_window_tokens:  # with the file's value of the other
                return LONGEST_ANSWER
            written.append(current)
            return None

        try:
            outcome = await save_with_key(self, self.bridge, edit, self.model_form)
        finally:
            self._saving = False
        if outcome.key_not_stored:
            self._refuse(Refusal(f"Nothing was saved. {outcome.message} To save your other changes without the key, "
                                 "clear the API key field.", self.model_form.key))
            return False
        if not outcome.saved:
            self._say(outcome.message, ERROR_COLOUR)
            return False
        message = outcome.message
        self._show_problems([])
        self._show_command_mode(await self._tools.command_mode() if self._tools else None)
        problem = await self._apply_autostart()
        self._saved(written[0])
        held = [title for title, page in self._own_saves if page.unsaved() and not await page.save()]
        if held:
            problem = " ".join(filter(None, [problem, f"{' and '.join(held)}: not saved; that page says why "
                                                          "and keeps your text."]))
        if problem:
            self._say(f"{message} But: {problem}", ERROR_COLOUR)
        else:
            self._say(message, OK_COLOUR)
        return not held  # a page that kept its text keeps the window open (Save on closing too)

    async def _unnamed_provider(self, edited: Config) -> Refusal | None:
        """The model form's check of the name's provider, made only about a name or address changed here: one
        saved before stays as it is (the chat says what is wrong with it)."""
        if (edited.model, edited.api_base) == (self._untouched.model, self._untouched.api_base):
            return None
        found = await self.model_form.unnamed_provider(self.status)  # the pages greyed by save()
        return Refusal(*found) if found else None

    def _refuse(self, refusal: Refusal) -> None:
        """Say why nothing was saved, on the page of the value to fix, with the cursor in its field."""
        self.tabs.setEnabled(True)  # the save ends here: a greyed field takes no cursor
        self._say(refusal.message, ERROR_COLOUR)
        field = refusal.field
        page: QWidget | None = field
        while page is not None and page.parentWidget() is not self.tabs.pages:
            page = page.parentWidget()
        if page is None:
            return
        self.tabs.setCurrentIndex(self.tabs.indexOf(page))
        area = field.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:
            area.ensureWidgetVisible(field)
        field.setFocus(Qt.FocusReason.OtherFocusReason)

    def _saved(self, config: Config) -> None:
        """What was written is what the form starts from now; after the file changed meanwhile, it shows it
        whole (its other values are the file's)."""
        if not self.stale.isHidden():
            self.load(config)
        else:
            self._shown = copy.deepcopy(config)
            self._untouched = self._form_values()[0]

    async def _host_network_agreed(self, edited: Config) -> bool:
        """Switching commands to this computer's network asks first; Cancel puts the mode in force back."""
        in_force = value_at(self.bridge.settings.config, NETWORK)
        if value_at(edited, NETWORK) != HOST or value_at(self._untouched, NETWORK) == HOST or in_force == HOST:
            return True
        if await confirm(self, "Give commands this computer's network?", HOST_NETWORK_QUESTION,
                         "Use this computer's network", icon=QMessageBox.Icon.Warning):
            return True
        row = self.rows[NETWORK]
        row.show(in_force)
        shown = row.widget.currentText() if isinstance(row.widget, QComboBox) else in_force
        self._say(f"Not saved. Network for commands is back to “{shown}” (Save again for your other changes).",
                  ERROR_COLOUR)
        return False

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

    def _say(self, text: str, colour: str) -> None:
        set_note(self.status, text, colour)

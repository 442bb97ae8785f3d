"""First run: shown in the chat window until a model is configured.

It looks for a local OpenAI-compatible server (one click uses it) and for a workspace left by the
nanobot CLI (offered so its memory and skills carry over); otherwise it takes the address of a server of
one's own (vLLM, a LiteLLM proxy) or a provider and key.

A key the keyring would not take (its password prompt cancelled, no keyring at all) stops the save with why, in
plain words, right under the form: the person can try again, or, where the server may need no key, go on
without storing it."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from desktop.config import Config
from desktop.kernel.taskset import spawn
from desktop.providers import catalog
from desktop.providers.discovery import (
    KNOWN_SERVERS,
    KnownServer,
    LocalServer,
    existing_nanobot_workspace,
    probe_local_servers,
)
from desktop.ui.bridge import CoreBridge
from desktop.ui.form_widgets import (
    ERROR_COLOUR,
    OK_COLOUR,
    heading,
    note_label,
    set_note,
    wheel_needs_focus,
    while_greyed,
)
from desktop.ui.model_form import KeyNotStored, ModelForm
from desktop.ui.model_save import SaveOutcome, save_with_key

log = logging.getLogger(__name__)
STYLE = """
#card { background: palette(base); border: 1px solid palette(midlight); border-radius: 8px; }
"""


class OnboardingPanel(QWidget):
    configured = Signal()  # a model is saved and in effect: the chat window can show the conversation

    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None, *,
                 servers: tuple[KnownServer, ...] = KNOWN_SERVERS) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self._servers = servers
        self.setStyleSheet(STYLE)

        title = QLabel("Welcome to Nanobot Tray")
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.7)
        font.setBold(True)
        title.setFont(font)
        intro = note_label("Pick the model that will answer. You can change it any time in Settings.")
        self.why = note_label()  # when config.yaml exists but could not be used: why this shows again
        self.why.hide()

        self.local_status = note_label("Looking for a model server on this computer "
                                       f"({', '.join(s.name for s in servers)})…")
        self.local_rows = QVBoxLayout()
        self.local_rows.setSpacing(8)
        self.rescan = QPushButton("Look again")
        self.rescan.clicked.connect(self.scan)
        self.rescan.hide()
        rescan_row = QHBoxLayout()
        rescan_row.addWidget(self.rescan)
        rescan_row.addStretch(1)
        local = _card(heading("A model on this computer"), self.local_status, self.local_rows, rescan_row)

        self.workspace_choice = QCheckBox()
        self.workspace_choice.setChecked(True)
        self.workspace_card = _card(
            heading("Your nanobot workspace"), self.workspace_choice,
            note_label("Its memory, skills and notes carry over. Leave this unticked to start a fresh workspace."))
        self.workspace_card.hide()

        self.server_form = ModelForm(custom_server=True)
        self.server_save_button, self.server_status, server_save_row = _save_row()
        self.server_save_button.clicked.connect(lambda: spawn(self.save_form(self.server_form, self.server_status)))
        self.server_key_problem = KeyProblem()
        server = _card(heading("Or a custom server (OpenAI-compatible)"),
                       note_label("vLLM, a LiteLLM proxy or any server that speaks the OpenAI API, on this computer "
                                  "or another. A key, if it needs one, is kept in your system keyring."),
                       self.server_form, self.server_key_problem, server_save_row)

        self.model_form = ModelForm()
        self.save_button, self.status, save_row = _save_row()
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(lambda: spawn(self.save_form(self.model_form, self.status)))
        self.key_problem = KeyProblem()
        self._problems = {self.server_form: (self.server_key_problem, self.server_status),
                          self.model_form: (self.key_problem, self.status)}
        for form, (problem, note) in self._problems.items():
            for edited in (form.api_base.textChanged, form.model.currentTextChanged, form.key.textChanged):
                edited.connect(note.clear)  # "type the address first" must not outlive the typing
                edited.connect(problem.hide)  # nor a refused key the key (or what it was for) that changed
            problem.try_again.clicked.connect(lambda _c=False, form=form, note=note: spawn(self.save_form(form, note)))
            problem.go_on.clicked.connect(lambda _c=False, form=form, note=note: spawn(self.save_form(
                form, note, store_key=False)))
        cloud = _card(heading("Or a provider with an API key"),
                      note_label("OpenAI, Anthropic, OpenRouter, Gemini and many more. The key is kept in your "
                                 "system keyring."), self.model_form, self.key_problem, save_row)
        self._cards = {self.server_form: server, self.model_form: cloud}  # each form with its Save button
        self._saving = False  # a save is under way: every way to save waits for it (`_one_save`)
        self._save_buttons = (self.save_button, self.server_save_button, self.key_problem.try_again,
                              self.key_problem.go_on, self.server_key_problem.try_again, self.server_key_problem.go_on)

        column = QVBoxLayout()
        column.setSpacing(14)
        for part in (title, intro, self.why, local, self.workspace_card, cloud, server):
            column.addWidget(part)
        column.addStretch(1)
        holder = QWidget()
        holder.setLayout(column)
        holder.setMaximumWidth(640)
        centred = QHBoxLayout()
        centred.addStretch(1)
        centred.addWidget(holder, 100)
        centred.addStretch(1)
        inner = QWidget()
        inner.setLayout(centred)
        scroll = self._scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        wheel_needs_focus(self)  # scrolling the page over a form must not pick a provider or a model

        self.model_form.load(Config(model="openai/"))
        self.server_form.load(Config(model="openai/"))
        self._show_workspace(existing_nanobot_workspace())
        self.scan()
        spawn(self._explain())

    async def _explain(self) -> None:
        """A settings file that could not be read is why a set-up app asks again: say so, and that it is kept."""
        loaded = await self.bridge.settings.read()
        if loaded.unreadable:
            set_note(self.why, f"Your settings could not be read, so setup is shown again: {loaded.problems[0]}. "
                     "Saving here keeps a copy of the old file next to it.", ERROR_COLOUR)
            self.why.show()

    # ----- detection
    def scan(self) -> None:
        self.rescan.hide()
        set_note(self.local_status, "Looking for a model server on this computer…", None)
        spawn(self._scan())

    async def _scan(self) -> None:
        found = await probe_local_servers(self._servers)
        while self.local_rows.count():
            item = self.local_rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        usable = [s for s in found if s.models]
        for server in usable:
            self.local_rows.addWidget(self._server_row(server))
        if usable:
            set_note(self.local_status, "Found — one click and it answers. Nothing leaves this computer.", None)
        else:
            idle = [s.kind.name for s in found]
            reason = (f"{', '.join(idle)} is running but has no model loaded. " if idle else
                      "No local model server found. ")
            set_note(self.local_status, reason + "Start Ollama, LM Studio or llama.cpp (with a model) and "
                     "look again, or use a provider below.", None)
            self.rescan.show()
        log.info("local model servers found: %s", ", ".join(f"{s.kind.name} at {s.root}" for s in usable) or "none")

    def _server_row(self, server: LocalServer) -> QWidget:
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"<b>{server.kind.name}</b> at {server.root}")
        models = QComboBox()
        models.addItems(list(server.models))
        models.setMinimumContentsLength(18)
        wheel_needs_focus(models)
        use = QPushButton("Use this")
        use.clicked.connect(lambda: spawn(self.use_local(server, models.currentText())))
        line.addWidget(label)
        line.addStretch(1)
        line.addWidget(models)
        line.addWidget(use)
        return row

    def _show_workspace(self, path: Path | None) -> None:
        self.workspace_card.setVisible(path is not None)
        if path is not None:
            self.workspace_choice.setText(f"Use {path} as the workspace")
            self.workspace_choice.setProperty("path", str(path))

    # ----- saving
    async def use_local(self, server: LocalServer, model_id: str) -> None:
        def edit(config: Config) -> None:
            config.model = server.model_for(model_id)
            config.api_base = server.api_base
            self._edit_workspace(config)

        await self._one_save(lambda: self._save_local(edit))

    async def _save_local(self, edit: Callable[[Config], None]) -> None:
        self._show(await save_with_key(self, self.bridge, edit, None), self.local_status)

    async def save_form(self, form: ModelForm, status: QLabel, *, store_key: bool = True) -> None:
        """Save what `form` (the provider's or the custom server's) says, or say in `status` what is missing.
        `store_key=False`: the person chose to go on without storing the key the keyring would not take."""
        await self._one_save(lambda: self._save_form(form, status, store_key))

    async def _one_save(self, save: Callable[[], Awaitable[None]]) -> None:
        """Run `save` unless one is under way, with the Save buttons greyed until it ends. A save can wait long
        (the model helper starting, the keyring's password prompt open until answered): a click meanwhile would
        store the key and save again, and say twice that setup is done."""
        if self._saving:
            return
        self._saving = True
        for button in self._save_buttons:
            button.setEnabled(False)
        try:
            await save()
        finally:
            self._saving = False
            for button in self._save_buttons:
                button.setEnabled(True)

    async def _save_form(self, form: ModelForm, status: QLabel, store_key: bool) -> None:
        provider = form.key_provider()
        problem_box, _ = self._problems[form]
        problem_box.hide()
        # the name's provider before the key: "paste your nosuch API key" would mislead
        refused = form.problem_at() or await while_greyed(self._cards[form], form.unnamed_provider(status))
        if refused:
            text, field = refused
            set_note(status, text, ERROR_COLOUR)
            field.setFocus(Qt.FocusReason.OtherFocusReason)
            return
        if (catalog.needs_key(provider) and not form.api_base.text().strip() and not form.key.text().strip()
                and not form.has_stored_key):
            set_note(status, f"Paste your {provider} API key first.", ERROR_COLOUR)
            return

        def edit(config: Config) -> None:
            form.apply_to(config)
            self._edit_workspace(config)

        # greyed, as the keyring's prompt may stay open long
        outcome = await while_greyed(self._cards[form], save_with_key(self, self.bridge, edit,
                                                                      form if store_key else None))
        if outcome.key_not_stored:
            status.clear()
            may_go_on = bool(form.api_base.text().strip()) or not catalog.needs_key(provider)
            problem_box.show_problem(outcome.key_not_stored, may_go_on)
            QTimer.singleShot(0, lambda: self._scroll.ensureWidgetVisible(problem_box, 0, 24))
            return
        self._show(outcome, status)

    def _edit_workspace(self, config: Config) -> None:
        if self.workspace_card.isVisible() and self.workspace_choice.isChecked():
            config.workspace = str(self.workspace_choice.property("path"))

    def _show(self, outcome: SaveOutcome, status: QLabel) -> None:
        """Say in `status` why nothing was saved, or that setup is done, and show the conversation."""
        if not outcome.saved:
            set_note(status, outcome.message, ERROR_COLOUR)
            return
        set_note(status, f"Ready: {self.bridge.settings.config.model} will answer.", OK_COLOUR)
        self.configured.emit()


class KeyProblem(QFrame):
    """Why the typed key was not stored, where the person looks after saving, with the ways on: Try again (the
    keyring asks again), and, where the server may need no key, Continue without storing the key (the setup is
    saved without it; Settings can store it later)."""

    def __init__(self) -> None:
        super().__init__()
        self.text = note_label()
        self.advice = note_label()
        self.go_on = QPushButton("Continue without storing the key")
        self.try_again = QPushButton("Try again")
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        buttons.addWidget(self.go_on)
        buttons.addWidget(self.try_again)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(6)
        layout.addWidget(self.text)
        layout.addWidget(self.advice)
        layout.addLayout(buttons)
        self.hide()

    def show_problem(self, problem: KeyNotStored, may_go_on: bool) -> None:
        set_note(self.text, problem.headline, ERROR_COLOUR)
        set_note(self.advice, problem.advice, None)
        self.advice.setVisible(bool(problem.advice))
        self.go_on.setVisible(may_go_on)
        self.try_again.setVisible(problem.keyring)
        self.show()


def _save_row() -> tuple[QPushButton, QLabel, QHBoxLayout]:
    """A form's save button with the note that says what came of it."""
    button = QPushButton("Save and start chatting")
    status = note_label()
    row = QHBoxLayout()
    row.addWidget(status, 1)
    row.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
    return button, status, row


def _card(*parts: QWidget | QHBoxLayout | QVBoxLayout) -> QFrame:
    card = QFrame()
    card.setObjectName("card")
    layout = QVBoxLayout(card)
    layout.setContentsMargins(16, 12, 16, 14)
    layout.setSpacing(8)
    for part in parts:
        if isinstance(part, QWidget):
            layout.addWidget(part)
        else:
            layout.addLayout(part)
    return card

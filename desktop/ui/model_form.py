"""Provider, model, server address and API key, with a connection test: shared by Settings and onboarding.

With a server address the model list is the server's own (asked for off the GUI thread, a moment after
the address stops changing, and again each time the form is loaded: a server may have started serving
another model since); without one it is litellm's catalogue, plain names before dated snapshots.

`custom_server=True` is the form for a server of the person's own that speaks the OpenAI API (vLLM, a
LiteLLM proxy, anything on a port nobody guesses): its address comes first and is required, and there is no
provider to choose (litellm's OpenAI client talks to it, so a key is stored under `openai`).

The key field never shows a stored key: it only says whether one is stored, and a typed key goes
straight to the OS keyring on save."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.config import Config
from desktop.kernel import secrets
from desktop.kernel.secrets import KeyringState, forget_key, keyring_state, known_key, store_key
from desktop.kernel.taskset import spawn
from desktop.providers import catalog
from desktop.providers.connection import test_connection
from desktop.providers.helper import HelperFailed, HelperGone
from desktop.providers.llm import ProviderError
from desktop.providers.server_models import ServerModelsError, address_problem, list_server_models
from desktop.ui.form_widgets import (
    ERROR_COLOUR,
    OK_COLOUR,
    WARN_COLOUR,
    note_label,
    set_note,
    with_note,
)

LIST_DELAY_MS = 500  # ask the server once the address has stopped changing for this long
CHECKING_NAME = "Checking the model name…"
NO_MODEL = "Choose the model that answers first: pick one from the Model list, or type its name."

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KeyNotStored:
    """Why a typed key did not reach the keyring: `reason` in plain words, `advice` on what to do, and whether
    the keyring was what failed (asking it again may work: its prompt can come back and be answered)."""

    reason: str
    advice: str = ""
    keyring: bool = False

    @property
    def headline(self) -> str:
        return f"The key was not stored: {self.reason}."

    def __str__(self) -> str:
        return f"{self.headline} {self.advice}".strip()


class ModelForm(QWidget):
    def __init__(self, parent: QWidget | None = None, *, custom_server: bool = False) -> None:
        super().__init__(parent)
        self.custom_server = custom_server
        self._models: dict[str, list[str]] = {}
        self._models_read = False  # the model list came, or could not be read: no longer "Loading…"
        self._server_models: list[str] | None = None  # what the server at api_base lists, once it answered
        self._listing = 0  # bumped per request: an answer about an older address is dropped
        self._stored_key: bool | None = None  # None: not known this run without asking the keyring
        self._keyring: KeyringState | None = None

        self.provider = QComboBox(self)
        self.provider.setEditable(True)
        self.provider.addItems(list(catalog.POPULAR))
        self.provider.setToolTip("The provider as litellm names it, e.g. openai, anthropic, openrouter, ollama_chat")
        self.provider.currentTextChanged.connect(self._provider_changed)
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._model_edit = QLineEdit()
        self._model_edit.setPlaceholderText("Loading the model list…")
        self.model.setLineEdit(self._model_edit)
        completer = QCompleter(self.model.model(), self.model)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.model.setCompleter(completer)
        self.model.currentTextChanged.connect(self._model_text_changed)
        self.api_base = QLineEdit()
        self.api_base.setPlaceholderText("Only for local or OpenAI-compatible servers, e.g. http://127.0.0.1:1234/v1")
        self.api_base.textChanged.connect(lambda _t: self._show_key_state())
        self.api_base_note = note_label()
        self._list_timer = QTimer(self)
        self._list_timer.setSingleShot(True)
        self._list_timer.setInterval(LIST_DELAY_MS)
        self._list_timer.timeout.connect(lambda: spawn(self.list_server_models()))
        self.api_base.textChanged.connect(lambda _t: self._list_timer.start())
        if custom_server:
            self.api_base.setPlaceholderText("e.g. http://gpu-box:8000/v1 (vLLM) or http://127.0.0.1:4000 (LiteLLM)")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setClearButtonEnabled(True)
        self.forget = QPushButton("Forget stored key")
        self.forget.setFlat(True)
        self.forget.setCursor(Qt.CursorShape.PointingHandCursor)
        self.forget.clicked.connect(lambda: spawn(self._forget()))
        key_row = QHBoxLayout()
        key_row.setContentsMargins(0, 0, 0, 0)
        key_row.addWidget(self.key, 1)
        key_row.addWidget(self.forget)
        self.keyring_note = note_label()
        if custom_server:  # a server that wants a key may list its models only once it is typed
            self.key.textChanged.connect(lambda _t: self._list_timer.start())

        self.test_button = QPushButton("Test connection")
        self.test_button.setToolTip("Sends one tiny request (one token) with the settings above")
        self.test_button.clicked.connect(self._start_test)
        self.test_result = note_label()
        # the width the row leaves it, never more: a result with a long unbroken name (a served model's) would
        # otherwise widen the window, and the notes above would wrap anew and move the button
        self.test_result.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        test_row = QHBoxLayout()
        test_row.setContentsMargins(0, 0, 0, 0)
        test_row.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignTop)
        test_row.addWidget(self.test_result, 1)

        for edited in (self.provider.currentTextChanged, self.model.currentTextChanged, self.api_base.textChanged,
                       self.key.textChanged):
            edited.connect(self._forget_test_result)

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        if custom_server:
            self.provider.hide()
            form.addRow("Server address", with_note(self.api_base, self.api_base_note))
        else:
            form.addRow("Provider", self.provider)
        form.addRow("Model", self.model)
        if not custom_server:
            form.addRow("Server address", with_note(self.api_base, self.api_base_note))
        form.addRow("API key", with_note(key_row, self.keyring_note))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(10)
        layout.addLayout(form)
        layout.addLayout(test_row)

    # ----- values
    def load(self, config: Config) -> None:
        provider, _, name = config.model.partition("/") if "/" in config.model else ("", "", config.model)
        with QSignalBlocker(self.provider):
            self.provider.setCurrentText(provider)
        self._fill_models(provider)
        self.model.setCurrentText(name)
        self.api_base.setText(config.api_base or "")
        self._list_timer.start()  # also when the address is the one shown before: its list may have changed
        self.key.clear()
        self.test_result.clear()
        spawn(self._load_catalog())
        spawn(self._refresh_key_state())

    def problem_at(self, *, model_needed: bool = True) -> tuple[str, QWidget] | None:
        """What must be fixed before these values can be saved, and the field to fix it in. `model_needed`: an
        empty model field is refused (saved, no chat could be answered); Settings needs one only where config.yaml
        had one, so a window opened before setup is done can still save the rest."""
        if self.custom_server and not self.api_base.text().strip():
            return "Type the server's address first (its base URL, e.g. http://gpu-box:8000/v1).", self.api_base
        wrong_address = address_problem(self.api_base.text())
        if wrong_address:
            return wrong_address, self.api_base
        wrong_name = self._name_problem()
        if wrong_name is None and model_needed and not self.model_name():
            return NO_MODEL, self.model
        return wrong_name

    def _name_problem(self) -> tuple[str, QWidget] | None:
        """A provider or model name with a space or a line break inside (often pasted with its surroundings) is
        refused by every provider, and only at the first chat, with an error that does not say why. A name the
        server at the address lists itself is taken as it is: that server answers to it."""
        provider, name = self.provider.currentText().strip(), self.model.currentText().strip()
        if name in (self._server_models or []):
            return None
        for what, text, example, field in (("provider", provider, "openai", self.provider),
                                           ("model name", name, "gpt-4o-mini", self.model)):
            blank = next((c for c in text if c.isspace() or not c.isprintable()), None)
            if blank is not None:
                shown = "".join(c if c.isprintable() else "⏎" for c in text)
                kind = ("a line break" if blank in "\r\n\u2028\u2029" else "a space" if blank.isspace()
                        else "an invisible character")
                return (f"The {what} “{shown}” has {kind} in it, which no provider accepts. Type it as the "
                        f"provider spells it (e.g. {example}), or pick it from the list."), field
        return None

    async def unnamed_provider(self, status: QLabel) -> tuple[str, QWidget] | None:
        """Why the model name cannot be saved when litellm cannot tell its provider (nosuch/x, a bare gpt-x) and
        no server address is given, with the field to fix it in (the provider): saved, every turn would fail, so it
        is refused as `/model` refuses it. The model helper is asked (the app's process never loads litellm). With
        an address any name is the server's. Started anew the helper takes seconds (litellm loads), so meanwhile
        `status`, the note under Save, says what is awaited (cleared after, for what comes of the save); the caller
        greys the fields being saved (`while_greyed`)."""
        model = self.model_name()
        if not model or self.api_base.text().strip():
            return None
        set_note(status, CHECKING_NAME, None)
        try:
            known = await catalog.names_provider(model)
        finally:
            status.clear()
        if known:
            return None
        return (f"The model name '{model}' names no provider the app knows: choose the provider and give the "
                f"model's name, such as openai/gpt-4o-mini or ollama/llama3, or give the server's address if a "
                f"server of your own serves it."), self.provider

    def model_name(self) -> str:
        """The model as litellm wants it: `provider/name` (free text allowed)."""
        provider = self.provider.currentText().strip()
        name = self.model.currentText().strip()
        if not name or not provider or name.startswith(f"{provider}/"):
            return name
        return f"{provider}/{name}"

    def apply_to(self, config: Config) -> None:
        config.model = self.model_name()
        config.api_base = self.api_base.text().strip() or None

    async def store_typed_key(self) -> KeyNotStored | None:
        """Put a typed key in the keyring. Returns why it was not stored (the key stays typed), or None."""
        typed = self.key.text().strip()
        provider = self.key_provider()
        if not typed:
            return None
        if not provider:
            return KeyNotStored("no provider is chosen", "Choose one so the key can be stored under its name.")
        try:
            await store_key(provider, typed)
        except ValueError as exc:
            return KeyNotStored(str(exc))
        except secrets.KeyringUnavailable as exc:
            return KeyNotStored(exc.reason, exc.advice, keyring=True)
        self.key.clear()
        await self._refresh_key_state()
        return None

    @property
    def has_stored_key(self) -> bool:
        return bool(self._stored_key)

    def key_provider(self) -> str:
        return self.provider.currentText().strip() or self.model.currentText().partition("/")[0].strip()

    # ----- actions
    def _start_test(self) -> None:
        self.test_button.setEnabled(False)
        set_note(self.test_result, "Testing…", None)
        spawn(self.run_test())

    async def run_test(self) -> None:
        config = Config()
        self.apply_to(config)
        try:
            message = await test_connection(config, self.key.text().strip() or None)
        except ProviderError as exc:
            set_note(self.test_result, f"✗ {exc}", ERROR_COLOUR)
        else:
            set_note(self.test_result, f"✓ {message}", OK_COLOUR)
        finally:
            self.test_button.setEnabled(True)

    def _forget_test_result(self) -> None:
        """A result is about the values it tested; once they change it would mislead."""
        if self.test_button.isEnabled():
            self.test_result.clear()

    async def _forget(self) -> None:
        provider = self.key_provider()
        try:
            existed = await forget_key(provider)
        except secrets.KeyringUnavailable as exc:
            set_note(self.test_result, f"✗ Could not remove the key: {exc}", ERROR_COLOUR)
        else:
            set_note(self.test_result, f"Removed the {provider} key." if existed
                     else f"No key was stored for {provider}.", None)
        await self._refresh_key_state()

    # ----- model list
    async def list_server_models(self) -> None:
        """Offer the models the server at the address serves, or say why they could not be listed."""
        self._list_timer.stop()
        self._listing += 1
        asked, address = self._listing, self.api_base.text().strip()
        problem = address_problem(address)
        if not address or problem:
            self._server_models = None
            set_note(self.api_base_note, problem or "", ERROR_COLOUR if problem else None)
            self._fill_models(self.provider.currentText().strip())
            return
        set_note(self.api_base_note, f"Asking {address} for its models…", None)
        try:
            names: list[str] | None = await list_server_models(address, self.key.text().strip() or None)
            count = len(names or [])
            note, colour = f"{count} model{'' if count == 1 else 's'} on this server.", None
        except ServerModelsError as exc:
            names, note, colour = None, f"Could not list the server's models: {exc}", WARN_COLOUR
        if asked != self._listing:
            return  # the address changed meanwhile; its own request reports
        self._server_models = names
        set_note(self.api_base_note, note, colour)
        self._fill_models(self.provider.currentText().strip())
        if names and not self.model.currentText().strip():
            self.model.setCurrentText(names[0])  # a server's own list: its first model is a choice that works

    async def _load_catalog(self) -> None:
        try:
            self._models = await catalog.chat_models()
        except (HelperGone, HelperFailed) as exc:  # typing a model name still works
            log.warning("the model list could not be read: %s", exc)
            self._models_read = True
            self._fill_models(self.provider.currentText().strip())
            return
        self._models_read = True
        current = self.provider.currentText()
        with QSignalBlocker(self.provider):
            self.provider.clear()
            self.provider.addItems(list(self._models))
            self.provider.setCurrentText(current)
        self._fill_models(current)

    def _fill_models(self, provider: str) -> None:
        text = self.model.currentText()
        others: list[str] = []
        if self._server_models is not None:
            common = list(self._server_models)
        else:
            common, others = catalog.common_first(m.removeprefix(f"{provider}/")
                                                  for m in self._models.get(provider, []))
        with QSignalBlocker(self.model):
            self.model.clear()
            self.model.addItems(common)
            if common and others:
                self.model.insertSeparator(len(common))
            self.model.addItems(others)
            self.model.setCurrentText(text)
        count = len(common) + len(others)
        if self._server_models is not None:
            hint = f"{count} models on the server; free text allowed"
        elif self.custom_server:  # its list is the server's own
            hint = "Type the model's name" if self.api_base.text().strip() else \
                "Give the server's address to list its models, or type the model's name"
        elif self._models_read:
            hint = "Type a model name" if not count else f"{count} known models; free text allowed"
        else:
            hint = "Loading the model list…"
        self._model_edit.setPlaceholderText(hint)

    def _provider_changed(self, provider: str) -> None:
        self._fill_models(provider.strip())
        self.model.setCurrentText("")
        spawn(self._refresh_key_state())

    def _model_text_changed(self, text: str) -> None:
        """A pasted `provider/model` picks its provider."""
        prefix, slash, rest = text.partition("/")
        if slash and prefix in self._models and prefix != self.provider.currentText():
            with QSignalBlocker(self.provider):
                self.provider.setCurrentText(prefix)
            self._fill_models(prefix)
            with QSignalBlocker(self.model):
                self.model.setCurrentText(rest)
            spawn(self._refresh_key_state())

    # ----- key and keyring state
    async def _refresh_key_state(self) -> None:
        """From what this run already knows: asking the keyring here could pop up a system password dialog
        every time the form opens."""
        self._keyring = await keyring_state()
        provider = self.key_provider()
        self._stored_key = known_key(provider) if provider else False
        self._show_key_state()

    def _show_key_state(self) -> None:
        provider = self.key_provider()
        local = bool(self.api_base.text().strip()) or not catalog.needs_key(provider or "this provider")
        whose = f"your {provider} API key" if provider else "the provider's API key"
        if self._stored_key:
            self.key.setPlaceholderText(f"A key for {provider or 'this provider'} is stored; type here to replace it")
        elif self.custom_server:
            self.key.setPlaceholderText("Only if the server asks for one (a LiteLLM proxy key, vLLM's --api-key)")
        elif local:
            self.key.setPlaceholderText("Usually not needed for a local server")
        elif self._stored_key is None:
            self.key.setPlaceholderText(f"Paste {whose}, or leave empty to keep a stored one")
        else:
            self.key.setPlaceholderText(f"Paste {whose}")
        self.forget.setVisible(bool(self._stored_key))  # only what this run knows: finding out could prompt
        state = self._keyring
        if state is None:
            self.keyring_note.clear()
        elif state.problem:
            set_note(self.keyring_note, f"⚠ {state.problem}", ERROR_COLOUR)
        elif state.plaintext:
            set_note(self.keyring_note, f"⚠ {state.summary} Anyone who can read your files can read the key. "
                       "Install and unlock GNOME Keyring or KWallet to keep it encrypted.", WARN_COLOUR)
        else:
            set_note(self.keyring_note, f"{state.summary} It is checked when a key is saved or needed, and a key is "
                     "never written to config.yaml.", None)

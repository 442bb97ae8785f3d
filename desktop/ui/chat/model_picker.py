"""The model picker of a chat (the chat window's header, the quick prompt): shows the model that answers in
that chat and switches it for that chat alone.

A pick is kept with the chat (desktop/session/chat_model.py), so it sticks after a restart and never
changes another chat, as in the chat apps people know; the default for new chats is `model` in Settings.
The list is the server's own models when a server address is set, else the common chat models of the
provider; it is fetched off the GUI thread when the picker is first opened and after the default model or
the address changed."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSignalBlocker
from PySide6.QtWidgets import QComboBox, QToolTip, QWidget

from desktop.kernel.bus import TurnFinished
from desktop.kernel.taskset import spawn
from desktop.providers.server_models import offered_models
from desktop.session.chat_model import chat_model
from desktop.ui.bridge import CoreBridge

TOOLTIP = "The model that answers in this chat. New chats start with the default model set in Settings."


class ModelPicker(QComboBox):
    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.session_key = ""  # the chat it shows and switches
        self._stale = True  # the list must be asked for again before the popup shows
        self.setToolTip(TOOLTIP)
        self.setPlaceholderText("no model configured")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setMaximumWidth(320)
        self.activated.connect(lambda index: spawn(self.pick(self.itemText(index))))
        self._unsubscribe = bridge.settings.subscribe(("model", "api_base"), lambda _keys: self.model_changed())
        self.destroyed.connect(lambda: self._unsubscribe())
        bridge.event.connect(self._on_event)
        self._current = ""

    def show_chat(self, key: str) -> None:
        """Show (and from now on switch) the model of chat `key`."""
        self.session_key = key
        spawn(self.show_current())

    async def show_current(self) -> str:
        """Show the chat's model (also when it is not in the list); returns it."""
        key = self.session_key
        default = self.bridge.settings.config.model
        current = chat_model(await self.bridge.load_chat(key), default) if key else default
        if key != self.session_key:
            return current  # another chat was opened meanwhile: its own call shows it
        self._current = current
        with QSignalBlocker(self):
            if current and self.findText(current) < 0:
                self.insertItem(0, current)
            self.setCurrentIndex(self.findText(current) if current else -1)
        self.setEnabled(bool(current and key))
        return current

    def model_changed(self) -> None:
        self._stale = True
        spawn(self.show_current())

    def _on_event(self, event: object) -> None:
        if isinstance(event, TurnFinished) and event.session_key == self.session_key:
            spawn(self.show_current())  # `/model NAME` typed in the chat

    def showPopup(self) -> None:  # noqa: N802
        if self._stale:
            spawn(self.refresh(then_popup=True))
            return
        super().showPopup()

    async def refresh(self, then_popup: bool = False) -> list[str]:
        """Ask for the models to offer (the server's, or the provider's common ones)."""
        names = await offered_models(self.bridge.settings.config)
        self._stale = False
        with QSignalBlocker(self):
            self.clear()
            self.addItems(names)
        await self.show_current()
        if then_popup and self.isVisible():
            super().showPopup()
        return names

    async def pick(self, model: str) -> bool:
        """Keep `model` as the chat's model; on failure say why and show the model still in force."""
        if not model or not self.session_key or model == self._current:
            return False
        try:
            await self.bridge.update_chat(self.session_key, model=model)
        except OSError as exc:
            await self.show_current()
            QToolTip.showText(self.mapToGlobal(QPoint(0, self.height())), f"Model not changed: {exc}", self)
            return False
        self._current = model
        return True

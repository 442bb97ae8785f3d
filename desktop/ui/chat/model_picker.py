"""The model picker of a chat (the chat window's header, the quick prompt): shows the model that answers in
that chat and switches it for that chat alone.

A pick is kept with the chat (desktop/session/chat_model.py), so it sticks after a restart and never
changes another chat, as in the chat apps people know; the default for new chats is `model` in Settings.
The list is the server's own models when a server address is set, else the common chat models of the
provider. It is asked for again, off the GUI thread, each time the picker opens, since a server may start or stop
serving a model at any time: the list it had shows at once and is replaced when the fresh one comes. With no list
yet (the first opening, or after the default model or the address changed) the popup waits for it, at most
FIRST_WAIT seconds, then shows what it has and fills in when the answer comes."""

from __future__ import annotations

import asyncio
import contextlib

from PySide6.QtCore import QPoint, QSignalBlocker
from PySide6.QtWidgets import QComboBox, QToolTip, QWidget

from desktop.kernel.bus import TurnFinished
from desktop.kernel.taskset import spawn
from desktop.providers.server_models import offered_models
from desktop.session.chat_model import chat_model
from desktop.ui.bridge import CoreBridge

FIRST_WAIT = 1.5  # seconds an opening with no list yet waits for one before showing what it has
TOOLTIP = "The model that answers in this chat. New chats start with the default model set in Settings."


class ModelPicker(QComboBox):
    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.session_key = ""  # the chat it shows and switches
        self._listed: list[str] | None = None  # the last list the server or catalogue gave; None: none yet
        self._asking: asyncio.Future[list[str]] | None = None  # the request under way, shared by openings
        self._asked_for = 0  # bumped when the settings change: an answer about older settings is dropped
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
        self._listed, self._asking = None, None  # a list for other settings: not shown while the new one comes
        self._asked_for += 1
        spawn(self.show_current())

    def _on_event(self, event: object) -> None:
        if isinstance(event, TurnFinished) and event.session_key == self.session_key:
            spawn(self.show_current())  # `/model NAME` typed in the chat

    def showPopup(self) -> None:  # noqa: N802
        if self._listed is None:
            spawn(self._open_when_listed())
            return
        super().showPopup()
        spawn(self.refresh())  # the list it had shows now; a fresh one replaces it when it comes

    async def _open_when_listed(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FIRST_WAIT):
                await asyncio.shield(self._ask())
        if self.isVisible() and not self.view().isVisible():
            super().showPopup()

    def _ask(self) -> asyncio.Future[list[str]]:
        """The request for the list: the one under way, else a new one."""
        if self._asking is None or self._asking.done():
            self._asking = spawn(self._fetch())
        return self._asking

    async def refresh(self) -> list[str]:
        """Ask for the models to offer (the server's, or the provider's common ones) and show them."""
        return await asyncio.shield(self._ask())

    async def _fetch(self) -> list[str]:
        asked_for = self._asked_for
        names = await offered_models(self.bridge.settings.config)
        if asked_for != self._asked_for:
            return names  # the settings changed meanwhile: the list is of another server
        if names != self._listed:
            self._listed = names
            with QSignalBlocker(self):
                self.clear()
                self.addItems(names)
            await self.show_current()
            if self.view().isVisible():
                super().showPopup()  # the open list takes the height of the new one
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

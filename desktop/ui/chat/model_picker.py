"""The model picker in the chat header: shows the model in force and switches it for every chat.

A pick is saved to config.yaml through the settings writer, so it sticks after a restart (a person who
picks from a menu expects that); `/model NAME` stays the way to try a model for this run only. The list
is the server's own models when a server address is set, else the common chat models of the provider;
it is fetched off the GUI thread when the picker is first opened and after the model or address changed."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSignalBlocker
from PySide6.QtWidgets import QComboBox, QToolTip, QWidget

from desktop.kernel.taskset import spawn
from desktop.providers.server_models import offered_models
from desktop.settings import SettingsError
from desktop.ui.bridge import CoreBridge

TOOLTIP = "The model that answers in every chat. A pick here is saved (Settings shows it too)."


class ModelPicker(QComboBox):
    def __init__(self, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self._stale = True  # the list must be asked for again before the popup shows
        self.setToolTip(TOOLTIP)
        self.setPlaceholderText("no model configured")
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.setMaximumWidth(320)
        self.activated.connect(lambda index: spawn(self.pick(self.itemText(index))))
        self._unsubscribe = bridge.settings.subscribe(("model", "api_base"), lambda _keys: self.model_changed())
        self.destroyed.connect(lambda: self._unsubscribe())
        self.show_current()

    def show_current(self) -> None:
        """Show the model in force (also when it is not in the list)."""
        current = self.bridge.settings.config.model
        with QSignalBlocker(self):
            if current and self.findText(current) < 0:
                self.insertItem(0, current)
            self.setCurrentIndex(self.findText(current) if current else -1)
        self.setEnabled(bool(current))

    def model_changed(self) -> None:
        self._stale = True
        self.show_current()

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
        self.show_current()
        if then_popup and self.isVisible():
            super().showPopup()
        return names

    async def pick(self, model: str) -> bool:
        """Save `model` as the model for all chats; on failure say why and show the model still in force."""
        if not model or model == self.bridge.settings.config.model:
            return False
        try:
            await self.bridge.settings.update(lambda config: setattr(config, "model", model))
        except (SettingsError, OSError) as exc:
            self.show_current()
            QToolTip.showText(self.mapToGlobal(QPoint(0, self.height())), f"Model not changed: {exc}", self)
            return False
        return True

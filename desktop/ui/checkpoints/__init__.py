"""Checkpoints in the app: a strip in the chat window (desktop/ui/checkpoints/panel.py) with the open chat's
turns that changed files, each with its list of files and their diffs and "Undo these changes"; a column
beside the chat, toggled from its header, with what the agent made in it (made.py); both through the
Checkpoints service. And its Settings page, made from the `checkpoints` section's declarations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the panel loads with the chat window, the page with Settings
    from PySide6.QtWidgets import QWidget

    from desktop.ui.checkpoints.made import MadePanel
    from desktop.ui.checkpoints.panel import ChangesPanel


def attach_ui(host: UiHost) -> None:
    def build() -> ChangesPanel:
        from desktop.checkpoints import Checkpoints
        from desktop.ui.checkpoints.panel import ChangesPanel

        return ChangesPanel(host.get(Checkpoints), host.bridge)

    def build_made() -> MadePanel:
        from desktop.checkpoints import Checkpoints
        from desktop.ui.checkpoints.made import MadePanel

        return MadePanel(host.get(Checkpoints), host.bridge)

    host.add_chat_panel(build)
    host.add_chat_panel(build_made)
    host.add_settings_page("Checkpoints", "Each turn's changes to the workspace are recorded so they can be "
                           "undone. A workspace over these limits is not recorded (nothing of it is copied).",
                           _settings_group)


def _settings_group() -> QWidget:
    from desktop.ui.setting_rows import SettingsGroup

    return SettingsGroup("checkpoints")


UI_FEATURE = UiFeature("checkpoints", attach_ui)

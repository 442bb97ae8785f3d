"""Checkpoints in the app: a strip in the chat window (desktop/ui/checkpoints/panel.py) with the open chat's
turns that changed files, each with its list of files and "Undo these changes", through the Checkpoints
service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the panel loads with the chat window
    from desktop.ui.checkpoints.panel import ChangesPanel


def attach_ui(host: UiHost) -> None:
    def build() -> ChangesPanel:
        from desktop.checkpoints import Checkpoints
        from desktop.ui.checkpoints.panel import ChangesPanel

        return ChangesPanel(host.get(Checkpoints), host.bridge)

    host.add_chat_panel(build)


UI_FEATURE = UiFeature("checkpoints", attach_ui)

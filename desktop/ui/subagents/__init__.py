"""Background tasks in the app: a strip in the chat window (desktop/ui/subagents/panel.py) showing the open
chat's tasks as they run, with Cancel and each one's transcript, through the Subagents service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the panel loads with the chat window
    from desktop.ui.subagents.panel import TasksPanel


def attach_ui(host: UiHost) -> None:
    def build() -> TasksPanel:
        from desktop.subagents import Subagents
        from desktop.ui.subagents.panel import TasksPanel

        return TasksPanel(host.get(Subagents), host.bridge)

    host.add_chat_panel(build)


UI_FEATURE = UiFeature("subagents", attach_ui)

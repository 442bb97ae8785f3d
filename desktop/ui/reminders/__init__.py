"""Reminders in the app: a tray entry opening the Reminders window (desktop/ui/reminders/window.py), which
reads and changes the jobs through the Reminders service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the window and the service load when the window is first opened
    from desktop.ui.reminders.window import RemindersWindow


def attach_ui(host: UiHost) -> None:
    def build() -> RemindersWindow:
        from desktop.reminders import Reminders
        from desktop.ui.reminders.window import RemindersWindow

        window = RemindersWindow(host.get(Reminders), host.bridge)
        window.open_session.connect(lambda key: host.show_chat(key or None))
        return window

    host.add_window("reminders", build, tray_label="Reminders")


UI_FEATURE = UiFeature("reminders", attach_ui)

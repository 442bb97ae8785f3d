"""Usage in the app: a tray entry opening the Usage window (desktop/ui/usage/window.py), which reads the usage
log through the Usage service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the window and the service load when the window is first opened
    from desktop.ui.usage.window import UsageWindow


def attach_ui(host: UiHost) -> None:
    def build() -> UsageWindow:
        from desktop.ui.usage.window import UsageWindow
        from desktop.usage import Usage

        return UsageWindow(host.get(Usage), host.bridge)

    host.add_window("usage", build, tray_label="Usage")


UI_FEATURE = UiFeature("usage", attach_ui)

"""Usage in the app: a tray entry opening the Usage window (desktop/ui/usage/window.py), which reads the usage
log through the Usage service; in the chat window, the chat's use in its header and each answer's when hovered
(desktop/ui/usage/chat.py); and the Budgets page in Settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the window and the service load when the window is first opened, the strip with the chat
    from PySide6.QtWidgets import QWidget

    from desktop.ui.usage.chat import ChatUsagePanel
    from desktop.ui.usage.window import UsageWindow

BUDGETS = "How much reminders, the heartbeat, Dream and background tasks may use; typed chats are never held back."


def attach_ui(host: UiHost) -> None:
    def build() -> UsageWindow:
        from desktop.ui.usage.window import UsageWindow
        from desktop.usage import Usage

        return UsageWindow(host.get(Usage), host.bridge)

    def budgets_page() -> QWidget:
        from desktop.ui.setting_rows import SettingsGroup

        return SettingsGroup("budgets")

    def chat_strip() -> ChatUsagePanel:
        from desktop.ui.usage.chat import ChatUsagePanel
        from desktop.usage import Usage

        return ChatUsagePanel(host.get(Usage), host.bridge)

    host.add_window("usage", build, tray_label="Usage")
    host.add_chat_panel(chat_strip)
    host.add_settings_page("Budgets", BUDGETS, budgets_page)


UI_FEATURE = UiFeature("usage", attach_ui)

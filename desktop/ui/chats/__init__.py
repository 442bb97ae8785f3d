"""Chats in the app: the chat header's Export menu (desktop/ui/chats/export_menu.py), through the ChatExport
service."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the menu loads with the chat window
    from desktop.ui.chats.export_menu import ExportMenu


def attach_ui(host: UiHost) -> None:
    def build() -> ExportMenu:
        from desktop.chats import ChatExport
        from desktop.ui.chats.export_menu import ExportMenu

        return ExportMenu(host.get(ChatExport))

    host.add_chat_panel(build)


UI_FEATURE = UiFeature("chats", attach_ui)

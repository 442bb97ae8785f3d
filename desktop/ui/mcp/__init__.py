"""MCP servers in the app: a Settings page (desktop/ui/mcp/page.py) listing each configured server with its
live state, to add, change, test, trust, switch off, remove and import them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:  # the page loads with the Settings window
    from desktop.ui.mcp.page import McpServersPage

CAPTION = "Programs and services that give the assistant more tools (MCP servers). Changes here take effect at once."


def attach_ui(host: UiHost) -> None:
    def build() -> McpServersPage:
        from desktop.mcp import McpServers
        from desktop.ui.mcp.page import McpServersPage

        return McpServersPage(host.get(McpServers), host.bridge)

    host.add_settings_page("MCP servers", CAPTION, build)


UI_FEATURE = UiFeature("mcp", attach_ui)

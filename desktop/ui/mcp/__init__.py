"""MCP servers in the app: a Settings page (desktop/ui/mcp/page.py) listing each configured server with its
live state, to add, change, test, trust, switch off, remove and import them; and the connected servers'
resources in the `+` menu of the chat and the quick prompt (desktop/mcp/attachable.py)."""

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

    def offer_resources() -> None:
        from desktop.kernel.paths import home
        from desktop.mcp import McpServers
        from desktop.mcp.attachable import ResourceSource
        from desktop.ui.context.sources import offer

        offer(ResourceSource(host.get(McpServers), home().data_dir))

    host.add_settings_page("MCP servers", CAPTION, build)
    host.on_ready(offer_resources)


UI_FEATURE = UiFeature("mcp", attach_ui)

"""Tools the model can call: JSON-Schema-described, validated, registered by name.

The built-in ones are made by the composition root (desktop/core.py `default_tools`); the `Tools` service is
what the windows ask about them (Settings: how shell commands are contained here, and which tools there are to
set to allow, ask or deny)."""

from __future__ import annotations

from desktop.kernel.host import Feature, Host
from desktop.tools.sandbox import SandboxMode
from desktop.tools.shell import ExecTool


class Tools:
    def __init__(self, host: Host) -> None:
        self._host = host

    async def command_mode(self) -> SandboxMode | None:
        """How `exec` commands are contained here (sandboxed, or not and why) and what network they get; None
        when the exec tool is not loaded."""
        tool = self._host.tools.get("exec")
        return await tool.mode() if isinstance(tool, ExecTool) else None

    def named(self) -> list[tuple[str, str]]:
        """Every registered tool as (name, how the person knows it): the built-in ones in registration order,
        then MCP tools by their "server · tool" label, as the chat names their calls."""
        tools = [tool for name in self._host.tools.names if (tool := self._host.tools.get(name)) is not None]
        return [(tool.name, tool.label or tool.name) for tool in sorted(tools, key=lambda t: (bool(t.label), t.label))]

    def grants(self) -> list[str]:
        """The names a grant decided ahead can give (desktop/approvals/ahead.py), sorted: each tool's own, and
        `mcp:SERVER` for the MCP servers whose tools are loaded."""
        return sorted({tool.grant() for name in self._host.tools.names if (tool := self._host.tools.get(name))})


def attach(host: Host) -> Tools:
    return Tools(host)


FEATURE = Feature("tools", Tools, attach)

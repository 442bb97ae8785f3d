"""Approvals: before a tool runs, the policy says allow, ask or deny; an asker (the terminal for the headless
`agent`, later a card in the desktop) answers the asks.

The sandbox and the path guard contain what they can, so asks are kept for what they cannot: `exec`
where bubblewrap does not run, file tools reaching outside the workspace with the restriction off, and
MCP tools. `approvals.tools` in config.yaml sets a tool to allow, ask or deny outright. Approving never
lifts a tool's own refusals (destructive commands, app-managed files): those hold even with --yes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from desktop.config import Config
from desktop.tools.base import Tool, ToolContext, ToolError
from desktop.tools.path_guard import PathGuard
from desktop.tools.shell import ExecTool

if TYPE_CHECKING:
    from desktop.core import Core

log = logging.getLogger(__name__)
Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
_FILE_TOOLS = {"read_file", "write_file", "edit_file", "list_dir", "glob", "grep"}
_ALWAYS_ALLOWED = {"web_fetch", "web_search", "message"}
MCP_PREFIX = "mcp_"  # MCP tools ask until the user trusts their server


@dataclass(frozen=True)
class ApprovalRequest:
    """One question for the user: exactly what would run, and why it needs a yes."""

    session_key: str
    tool: str
    shown: str  # the command, or the path (what the user approves)
    reason: str


Asker = Callable[[ApprovalRequest], Awaitable[bool]]


class Approvals:
    """Decides each tool call and, for an ask, waits for `asker` (None: nobody can answer, the call fails
    with `no_asker_hint`). An unanswered question is denied after `approvals.timeout` seconds."""

    def __init__(self, config: Config, asker: Asker | None, no_asker_hint: str = "") -> None:
        self.config = config
        self.asker = asker
        self.no_asker_hint = no_asker_hint

    async def decide(self, tool: Tool, arguments: dict[str, Any]) -> tuple[Decision, str]:
        """The decision for one call and, for ask and deny, why."""
        configured = self.config.approvals.tools.get(tool.name)
        if configured is not None:
            if configured in DECISIONS:
                return configured, f"approvals.tools.{tool.name} is {configured}"  # type: ignore[return-value]
            log.warning("approvals.tools.%s is %r, not allow, ask or deny: asking", tool.name, configured)
            return "ask", f"approvals.tools.{tool.name} is {configured!r} (not allow, ask or deny)"
        if isinstance(tool, ExecTool):
            mode = await tool.mode()
            return ("allow", "") if mode.sandboxed else ("ask", f"commands are {mode.description}")
        if tool.name in _FILE_TOOLS:
            return _file_decision(tool, arguments)
        if tool.name.startswith(MCP_PREFIX):
            return "ask", "tools of MCP servers ask until you trust the server"
        return "allow", ""

    async def check(self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> None:
        """Return when the call may run; raise ToolError (the model reads it) when it may not."""
        decision, why = await self.decide(tool, arguments)
        if decision == "allow":
            return
        if decision == "deny":
            raise ToolError(f"{tool.name} is not allowed ({why})")
        request = ApprovalRequest(ctx.session_key, tool.name, _shown(tool, arguments), why)
        if self.asker is None:
            raise ToolError(f"{tool.name} needs the user's approval ({why}) and nobody can be asked here"
                            + (f"; {self.no_asker_hint}" if self.no_asker_hint else ""))
        try:
            allowed = await asyncio.wait_for(self.asker(request), self.config.approvals.timeout)
        except TimeoutError:
            raise ToolError(f"{tool.name} was not approved: nobody answered within "
                            f"{self.config.approvals.timeout} s") from None
        if not allowed:
            raise ToolError(f"the user did not approve {tool.name}: {request.shown}")


def _file_decision(tool: Tool, arguments: dict[str, Any]) -> tuple[Decision, str]:
    guard: PathGuard | None = getattr(tool, "guard", None)
    if guard is None or guard.restrict:
        return "allow", ""  # the guard keeps it inside the workspace
    raw = arguments.get("path") or "."
    path = Path(raw).expanduser()
    path = (path if path.is_absolute() else guard.workspace / path).resolve()
    workspace = guard.workspace.resolve()
    if path == workspace or workspace in path.parents:
        return "allow", ""
    return "ask", f"{path} is outside the workspace and tools.restrict_to_workspace is off"


def _shown(tool: Tool, arguments: dict[str, Any]) -> str:
    if isinstance(tool, ExecTool):
        return str(arguments.get("command", ""))
    if "path" in arguments:
        return str(arguments["path"])
    return ", ".join(f"{k}={v!r:.80}" for k, v in arguments.items())


def attach_approvals(core: Core, asker: Asker | None, no_asker_hint: str = "") -> Approvals:
    """Put approvals in front of every tool call of `core` (all its registries share the gate)."""
    approvals = Approvals(core.config, asker, no_asker_hint)
    core.tools.gate = approvals.check
    return approvals

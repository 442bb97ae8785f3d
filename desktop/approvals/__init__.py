"""Approvals: before a tool runs, the policy says allow, ask or deny; an ask goes to the person through the
one door for questions (desktop/kernel/questions.py), which the app answers with a card in the chat or a
notification, and `nanobot-tray agent` at its terminal.

Each tool says when it asks (`Tool.needs_approval`, desktop/tools/base.py): the sandbox and the path guard
contain what they can, so asks are kept for what they cannot (`exec` where bubblewrap does not run, file
tools reaching outside the workspace with the restriction off, MCP tools until the user trusts the server).
It also says what the person approves (`shown`), the change as a diff, the card's title, and what "Always
allow" saves when that is broader than the call (`trust`: an MCP tool trusts its server). This module names
no tool. `approvals.tools` (Settings → Tools) sets a tool to allow, ask or deny outright. "Always allow" saves a
rule (`approvals.rules`: this exact command or path, in this workspace) through the settings writer.
Approving never lifts a tool's own refusals (destructive commands, app-managed files): those hold even with
--yes. While a question waits, its turn gives up its concurrent-turn place (the door sees to it).

A turn the app started on a schedule (a reminder, the heartbeat) never asks: what it may use was granted
ahead (ahead.py), and a call that would ask fails at once, saying what it lacked; the run goes on without it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from desktop.approvals.ahead import Unattended, UnattendedRuns
from desktop.approvals.settings import SECTION, ApprovalsConfig
from desktop.config import Config
from desktop.kernel.bus import MessageKind, ToolAwaiting
from desktop.kernel.host import Feature, Host
from desktop.kernel.questions import NotAsked
from desktop.settings import Settings
from desktop.tools.base import Tool, ToolContext, ToolError

log = logging.getLogger(__name__)
Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
Answer = Literal["once", "always", "deny"]  # Allow once / Always allow (saves a rule) / Deny
# What a run with nobody to ask (`cron run-due` or `heartbeat` from a system timer) tells the model.
NOBODY_HINT = ("this run has no window or terminal to ask in: allow it ahead with an \"Always allow\" rule, "
               "approvals.tools in config.yaml or a trusted MCP server, or let the app run it while it is open")


@dataclass(frozen=True)
class ApprovalRequest:
    """One question for the user: exactly what would run, and why it needs a yes."""

    session_key: str
    tool: str
    label: str  # how the tool is named to the person (an MCP tool: "server · tool"), as the chat names its calls
    title: str  # the card's question ("Run this command?"), the tool's own
    shown: str  # the command, or the path (what the user approves)
    reason: str
    detail: str = ""  # for writes and edits: the change as a unified diff
    always: str = ""  # what "Always allow" would save, in words
    timeout: float = 0.0  # seconds the gate waits before it counts the question as "no"
    deadline: float = 0.0  # the event loop's time when it does
    kind: MessageKind = MessageKind.USER  # what started the turn that asks (a reminder, a background result...)


Asker = Callable[[ApprovalRequest], Awaitable[Answer | str]]  # the door for questions answers in plain strings


class Approvals:
    """Decides each tool call and, for an ask, waits for `asker` (None, or a door nobody listens at: nobody can
    answer, the call fails with `no_asker_hint`). An unanswered question is denied after `approvals.timeout`
    seconds."""

    def __init__(self, config: Config, asker: Asker | None, no_asker_hint: str = "", *,
                 settings: Settings | None = None, workspace: Callable[[], Path] | None = None) -> None:
        self.config = config
        self.asker = asker
        self.no_asker_hint = no_asker_hint  # what the model is told when nobody can be asked here
        self.settings = settings  # where "Always allow" saves its rule; None: it counts as once
        self.workspace = workspace or (lambda: Path.cwd())
        self.unattended = UnattendedRuns()  # the scheduled runs in progress, with their grants

    async def decide(self, tool: Tool, arguments: dict[str, Any]) -> tuple[Decision, str]:
        """The decision for one call and, for ask and deny, why."""
        configured = self.config.section(ApprovalsConfig).tools.get(tool.name)
        if configured is not None:
            if configured in DECISIONS:  # said in the person's words: they may have set it in Settings
                return configured, f"{tool.label or tool.name} is set to {configured} in Settings → Tools"  # type: ignore[return-value]
            log.warning("approvals.tools.%s is %r, not allow, ask or deny: asking", tool.name, configured)
            return "ask", f"approvals.tools.{tool.name} is {configured!r} (not allow, ask or deny)"
        why = await tool.needs_approval(self.config, arguments)
        return ("allow", "") if why is None else ("ask", why)

    async def check(self, tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> None:
        """Return when the call may run; raise ToolError (the model reads it) when it may not."""
        decision, why = await self.decide(tool, arguments)
        if decision == "deny":
            raise ToolError(f"{tool.name} is not allowed ({why})")
        shown = tool.shown(arguments)
        if ctx.kind is MessageKind.SCHEDULED:
            self._ahead(tool, decision == "allow" or self._ruled(tool.name, shown), why,
                        self.unattended.of(ctx.session_key))
            return
        if decision == "allow" or self._ruled(tool.name, shown):
            return
        if self.asker is None:
            raise self._nobody(tool, why)
        timeout = self.config.section(ApprovalsConfig).timeout
        label = tool.label or tool.name
        title = tool.approval_title or f"Let the assistant use {label}?"
        trust = tool.trust()
        always = trust[0] if trust else f"always allow {label} of exactly this in this workspace"
        request = ApprovalRequest(ctx.session_key, tool.name, label, title, shown, why, await tool.change(arguments),
                                  always, timeout, asyncio.get_running_loop().time() + timeout, ctx.kind)
        ctx.publish(ToolAwaiting(ctx.session_key, ctx.call_id, True))  # the chat says so instead of "running"
        try:
            async with asyncio.timeout(timeout):
                answer = await self.asker(request)
        except TimeoutError:
            raise ToolError(f"{tool.name} was not approved: nobody answered within {duration(timeout)}, "
                            "so it was denied") from None
        except NotAsked as exc:
            if exc.quiet:
                raise ToolError(f"{tool.name} needs the user's approval ({why}), but Do not disturb is on, so "
                                "background work is not allowed to ask: it was denied") from None
            raise self._nobody(tool, why) from None
        finally:
            ctx.publish(ToolAwaiting(ctx.session_key, ctx.call_id, False))
        if answer == "deny":
            raise ToolError(f"the user did not approve {tool.name}: {request.shown}")
        if answer == "always":
            await self._remember(tool, shown)

    def _ahead(self, tool: Tool, allowed: bool, why: str, runs: list[Unattended]) -> None:
        """A scheduled run's call: its grants decide at once (a deny wins; an allow lifts an ask); one that would
        ask fails now and the runs note what they lacked."""
        grant = tool.grant()
        granted = {run.grants.get(grant) for run in runs}
        if "deny" in granted:
            raise ToolError(f"{tool.name} is not allowed in this scheduled run: its grants deny {grant}")
        if allowed or "allow" in granted:
            return
        for run in runs:
            run.want(grant)
        how = next((run.how for run in runs if run.how), self.no_asker_hint)
        raise ToolError(f"{tool.name} needs the user's approval ({why}), and this scheduled run has nobody to ask "
                        f"and no grant for {grant}, so it did not run. Finish with what you have; the user is "
                        f"told what it wanted" + (f" ({how})" if how else "") + ".")

    def _nobody(self, tool: Tool, why: str) -> ToolError:
        return ToolError(f"{tool.name} needs the user's approval ({why}) and nobody can be asked here"
                         + (f"; {self.no_asker_hint}" if self.no_asker_hint else ""))

    def _ruled(self, tool: str, shown: str) -> bool:
        """Whether a saved "Always allow" covers this exact call in the workspace in force."""
        here = str(self.workspace())
        return any(rule.get("tool") == tool and rule.get("what") == shown and rule.get("workspace", here) == here
                   for rule in self.config.section(ApprovalsConfig).rules)

    async def _remember(self, tool: Tool, shown: str) -> None:
        """Save the rule "Always allow" stands for: the tool's broader trust, else this exact call here."""
        if self.settings is None:
            return
        trust = tool.trust()
        if trust is not None:
            await self.settings.update(trust[1])
            return
        rule = {"tool": tool.name, "what": shown, "workspace": str(self.workspace())}
        await self.settings.update(lambda config: _add_rule(config, rule))


async def remove_rule(settings: Settings, rule: dict[str, str]) -> None:
    """Delete one saved "Always allow" rule: that call asks again."""
    await settings.update(lambda config: setattr(config.section(ApprovalsConfig), "rules",
                                                 [r for r in config.section(ApprovalsConfig).rules if r != rule]))


def _add_rule(config: Config, rule: dict[str, str]) -> None:
    if rule not in config.section(ApprovalsConfig).rules:
        config.section(ApprovalsConfig).rules.append(rule)


def duration(seconds: float) -> str:
    """`600` as "10 min", `30` as "30 s": how questions' timeouts are told."""
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def attach(host: Host) -> Approvals:
    """Put approvals in front of every tool call (all the host's tool registries share the gate), asking
    through the host's door for questions: an entry point with a person (the app, `agent` at a terminal)
    listens there; with nobody listening an ask fails with NOBODY_HINT (an entry point may say more)."""
    approvals = Approvals(host.config, host.questions.ask, NOBODY_HINT, settings=host.settings,
                          workspace=lambda: host.workspace)
    host.tools.gate = approvals.check
    return approvals


FEATURE = Feature("approvals", Approvals, attach, settings=SECTION)

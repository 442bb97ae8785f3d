"""The composition root: assembles the agent core from the home and config, for the CLI and the app.

It builds the parts every feature shares (settings, bus, model, tools, sessions, prompt, loop, the door for
asking the person), then attaches each feature of FEATURES: a feature is a package with one `FEATURE`
(desktop/kernel/host.py) whose `attach(host)` receives this core as its `Host` and returns the feature's
service, kept here by type (`Core.get`). The order is worked out from what each feature requires, so
adding a feature is one more entry in FEATURES; nothing else here, in the loop or in the shell changes.
`Core.start` / `Core.close` start and stop everything.

The host's surface is written down once, in desktop/kernel/host.py: tools, commands, turn hooks, start and
close (and once the last turn has ended), settings, publishing and hearing events, notices, questions for the
person, a turn from code, background work, and another feature's service. The scheduler (desktop/scheduler) is
such a service: `host.get(Scheduler).add_system_job(name, interval, run)` for work that runs on a schedule.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from desktop import (
    approvals,
    chats,
    checkpoints,
    heartbeat,
    keepawake,
    mcp,
    memory,
    reminders,
    scheduler,
    skills,
    subagents,
    tools,
    usage,
    voice,
)
from desktop.agent.commands import Commands
from desktop.agent.context import ContextBuilder
from desktop.agent.hooks import TurnHooks
from desktop.agent.loop import AgentLoop
from desktop.config import Config
from desktop.context import FEATURE as DESKTOP_CONTEXT  # `context` below is the prompt's ContextBuilder
from desktop.kernel.bus import Event, MessageBus, MessageKind, TurnError, TurnFinished
from desktop.kernel.host import Feature, Lifecycle, attach_order
from desktop.kernel.notices import Notice, OpenChat, Target
from desktop.kernel.paths import Home, home
from desktop.kernel.questions import Questions
from desktop.providers.llm import LLMProvider
from desktop.session.session import SessionStore
from desktop.settings import Settings
from desktop.skills.loader import SkillsLoader, skill_roots
from desktop.tools.filesystem import EditFileTool, GlobTool, GrepTool, ListDirTool, ReadFileTool, WriteFileTool
from desktop.tools.limits import Limits
from desktop.tools.message import MessageTool
from desktop.tools.path_guard import PathGuard
from desktop.tools.registry import ToolRegistry
from desktop.tools.sandbox import exec_sandbox
from desktop.tools.shell import ExecTool
from desktop.tools.web import WebFetchTool, WebSearchTool
from desktop.workspace.layout import APP_MANAGED_FILES, ensure_workspace

log = logging.getLogger(__name__)
S = TypeVar("S")
# Every feature, in the order they attach unless one requires another (desktop/kernel/host.py).
FEATURES: tuple[Feature, ...] = (tools.FEATURE, approvals.FEATURE, scheduler.FEATURE, skills.FEATURE, memory.FEATURE,
                                 mcp.FEATURE, usage.FEATURE, reminders.FEATURE, heartbeat.FEATURE,
                                 subagents.FEATURE, checkpoints.FEATURE, DESKTOP_CONTEXT, chats.FEATURE,
                                 keepawake.FEATURE, voice.FEATURE)
CLOSE_WITHIN = 5.0  # seconds each feature gets to stop on close; one taking longer is left behind: Quit never hangs


@dataclass
class Core:
    home: Home
    settings: Settings
    workspace: Path
    bus: MessageBus
    provider: LLMProvider
    tools: ToolRegistry
    sessions: SessionStore
    context: ContextBuilder
    loop: AgentLoop
    questions: Questions
    _services: dict[type, object] = field(default_factory=dict, init=False)
    _starters: list[Lifecycle] = field(default_factory=list, init=False)
    _closers: list[Lifecycle] = field(default_factory=list, init=False)
    _after_turns: list[Lifecycle] = field(default_factory=list, init=False)
    _running: asyncio.Future[None] | None = field(default=None, init=False)

    @property
    def config(self) -> Config:
        """The settings in force: one object every part holds and reads when it acts."""
        return self.settings.config

    @property
    def running(self) -> bool:
        """Whether `start` has run: the loop takes messages."""
        return self._running is not None

    @property
    def commands(self) -> Commands:
        return self.loop.commands

    @property
    def hooks(self) -> TurnHooks:
        return self.loop.hooks

    def get(self, service: type[S]) -> S:
        """The service a feature attached, by its type (`Core.get(Reminders)`)."""
        found = self._services.get(service)
        if found is None:
            raise LookupError(f"no feature provides {service.__name__}")
        return found  # type: ignore[return-value]  # attach() checked it is one

    async def ask_agent(self, session_key: str, text: str, *, kind: MessageKind = MessageKind.USER,
                        title: str = "") -> TurnFinished | TurnError:
        return await self.loop.ask(session_key, text, kind=kind, title=title)

    def busy(self) -> bool:
        return bool(self.loop.busy_sessions)

    def spawn(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        return self.loop.spawn(work)

    def publish(self, event: Event) -> None:
        self.bus.publish(event)

    def subscribe(self, listener: Callable[[Event], None]) -> Callable[[], None]:
        return self.bus.subscribe(listener)

    def attach(self, feature: Feature) -> None:
        service = feature.attach(self)
        if not isinstance(service, feature.provides):
            raise TypeError(f"feature {feature.name} attached {type(service).__name__}, "
                            f"not the {feature.provides.__name__} it provides")
        self._services[feature.provides] = service

    def notify(self, title: str, body: str, target: Target | None = None) -> None:
        """Tell the person something: one notice on the bus, which the app shows (desktop/kernel/notices.py)."""
        log.info("notice: %s — %s", title, body)
        self.bus.publish(Notice(title, body, target))

    def on_start(self, starter: Lifecycle) -> None:
        self._starters.append(starter)

    def on_close(self, closer: Lifecycle) -> None:
        self._closers.append(closer)

    def on_turns_ended(self, closer: Lifecycle) -> None:
        self._after_turns.append(closer)

    async def start(self) -> None:
        """Let the loop take messages, then start what features registered."""
        if self._running is not None:
            return
        self._running = asyncio.ensure_future(self.loop.run())
        for starter in self._starters:
            await starter()

    async def close(self, grace: float = 2.0) -> None:
        """Stop features (last attached first), let running turns save for `grace` seconds, stop the loop, then
        run what features left for once no turn writes a chat any more (`on_turns_ended`)."""
        await _close_each(reversed(self._closers))
        await self.loop.shutdown(grace)
        await _close_each(self._after_turns)
        if self._running is not None:
            self._running.cancel()
            await asyncio.wait([self._running], timeout=CLOSE_WITHIN)
            self._running = None

    def _follow_settings(self, changed: frozenset[str]) -> None:
        """A new workspace re-points the context and the tools; tools copy their settings when built. No
        await in here, so no turn sees the new settings half applied (Settings made the folder before saving;
        for a hand edit it is made in the background)."""
        workspace = self.home.workspace(self.config.workspace)
        if workspace != self.workspace:
            self.workspace = workspace
            self.context.workspace = workspace
            self.context.skills = SkillsLoader(skill_roots(workspace), lambda: self.config.skills.disabled)
            self.loop.spawn(asyncio.to_thread(ensure_workspace, workspace))
        fresh = default_tools(self.config, workspace, self.home)
        for name in fresh.names:
            self.tools.register(fresh.get(name))  # type: ignore[arg-type]


async def _close_each(closers: Iterable[Lifecycle]) -> None:
    """Await each closer in turn, each for at most CLOSE_WITHIN seconds: one that hangs or fails is logged and
    left behind, and the others still run."""
    for closer in closers:
        closing = asyncio.ensure_future(closer())
        done, _ = await asyncio.wait([closing], timeout=CLOSE_WITHIN)
        if not done:
            log.warning("closing %s took over %g s; left behind", getattr(closer, "__qualname__", closer),
                        CLOSE_WITHIN)
        elif not closing.cancelled() and closing.exception() is not None:  # nor one failing to stop
            log.error("closing %s failed", getattr(closer, "__qualname__", closer), exc_info=closing.exception())


def default_tools(config: Config, workspace: Path, h: Home | None = None) -> ToolRegistry:
    """The built-in tools for a workspace; `h` names the app's own folders the exec sandbox hides."""
    extras = [root for source, root in skill_roots(workspace) if source != "workspace"]
    protected = [workspace / name for name in APP_MANAGED_FILES]
    guard = PathGuard(workspace, config.tools.restrict_to_workspace, read_only_extras=extras, protected=protected)
    return ToolRegistry([
        ReadFileTool(guard), WriteFileTool(guard), EditFileTool(guard), ListDirTool(guard),
        GlobTool(guard), GrepTool(guard),
        ExecTool(workspace, config.tools.exec.timeout, restrict=config.tools.restrict_to_workspace,
                 run_extras=tuple(extras), sandbox=exec_sandbox(config, h or home(), workspace, extras, protected),
                 limits=Limits.of(config.tools.exec)),
        WebFetchTool(), WebSearchTool(config.tools.web.search_provider),
        MessageTool(),
    ])


def build_core(h: Home | None = None, settings: Settings | None = None) -> Core:
    """Everything the agent needs, wired once. Blocking (reads files): call off the GUI thread."""
    h = h or home()
    settings = settings or Settings.open(h.config_file)
    config = settings.config
    workspace = h.workspace(config.workspace)
    ensure_workspace(workspace)
    bus = MessageBus()
    provider = LLMProvider(config)
    tools = default_tools(config, workspace, h)
    sessions = SessionStore(h.sessions_dir)
    skills = SkillsLoader(skill_roots(workspace), lambda: config.skills.disabled)
    context = ContextBuilder(workspace, skills)
    loop = AgentLoop(settings, bus, provider, tools, sessions, context, h.tool_outputs_dir)
    questions = Questions(waiting=loop.waiting_for_user)  # nobody answers until an entry point listens
    core = Core(h, settings, workspace, bus, provider, tools, sessions, context, loop, questions)
    sessions.on_damaged = lambda key, copy: core.notify(
        "Part of a chat could not be read",
        f"Some lines of “{sessions.title_of(key)}” were damaged (a crash mid-write, a hand edit) and are left out; "
        f"the file as it was is kept as {copy}", OpenChat(key))
    settings.subscribe(("workspace", "tools"), core._follow_settings)  # first: features read core.workspace
    for feature in attach_order(FEATURES):
        core.attach(feature)
    return core

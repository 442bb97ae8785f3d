"""The composition root: assembles the agent core from the home and config, for the CLI and the app.

Features attach themselves. Each feature package offers one `attach_<feature>(core)` that builds its
service and plugs it into the extension points below; `build_core` calls each attach once, and
`Core.start` / `Core.close` start and stop everything. Nothing a feature needs grows the loop or the
shell. The extension points:

- `core.loop.commands.add(Command(...))`: slash commands (`desktop/agent/commands.py`).
- `core.loop.before_turn` / `after_turn` / `on_set_aside`: per-session hooks around a turn.
- `core.tools.register(tool)`: tools the model can call (`desktop/tools/base.py`); every call passes the
  approvals gate, attached here with nobody to ask; an entry point with a person attaches its asker
  (`desktop/approvals`).
- `core.on_start(fn)` / `core.on_close(fn)`: async work started with the core and awaited on close
  (closers run in reverse order, before the loop stops).
- `core.loop.spawn(coro)`: background work that the loop's shutdown cancels.
- `core.scheduler.add_system_job(name, interval, run)` / `core.scheduler.add(entry)`: work that runs on
  a schedule, deferred while a turn runs (`desktop/scheduler/`); reminders are such an entry.
- `core.settings.subscribe(keys, listener)`: hear which settings changed (Settings saved, a hand edit
  of config.yaml, a skill toggle, `/model`); parts read the shared `core.config` when they act and
  subscribe only for what they copied (`desktop/settings.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from desktop.agent.context import ContextBuilder
from desktop.agent.loop import AgentLoop
from desktop.approvals import Approvals, attach_approvals
from desktop.config import Config
from desktop.heartbeat import Heartbeat, attach_heartbeat
from desktop.kernel.bus import MessageBus
from desktop.kernel.notices import Notice, Target
from desktop.kernel.paths import Home, home
from desktop.mcp import McpServers, attach_mcp
from desktop.memory import Memory, attach_memory
from desktop.providers.llm import LLMProvider
from desktop.reminders import Reminders, attach_reminders
from desktop.scheduler import Scheduler, attach_scheduler
from desktop.session.session import SessionStore
from desktop.settings import Settings
from desktop.skills.loader import SkillsLoader, skill_roots
from desktop.subagents import Subagents, attach_subagents
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
Lifecycle = Callable[[], Awaitable[None]]
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
    approvals: Approvals = field(init=False)
    scheduler: Scheduler = field(init=False)
    memory: Memory = field(init=False)
    mcp: McpServers = field(init=False)
    reminders: Reminders = field(init=False)
    heartbeat: Heartbeat = field(init=False)
    subagents: Subagents = field(init=False)
    _starters: list[Lifecycle] = field(default_factory=list, init=False)
    _closers: list[Lifecycle] = field(default_factory=list, init=False)
    _running: asyncio.Future[None] | None = field(default=None, init=False)

    @property
    def config(self) -> Config:
        """The settings in force: one object every part holds and reads when it acts."""
        return self.settings.config

    @property
    def running(self) -> bool:
        """Whether `start` has run: the loop takes messages."""
        return self._running is not None

    def notify(self, title: str, body: str, target: Target | None = None) -> None:
        """Tell the person something: one notice on the bus, which the app shows (desktop/kernel/notices.py)."""
        log.info("notice: %s — %s", title, body)
        self.bus.publish(Notice(title, body, target))

    def on_start(self, starter: Lifecycle) -> None:
        self._starters.append(starter)

    def on_close(self, closer: Lifecycle) -> None:
        self._closers.append(closer)

    async def start(self) -> None:
        """Let the loop take messages, then start what features registered."""
        if self._running is not None:
            return
        self._running = asyncio.ensure_future(self.loop.run())
        for starter in self._starters:
            await starter()

    async def close(self, grace: float = 2.0) -> None:
        """Stop features (last attached first), let running turns save for `grace` seconds, stop the loop."""
        for closer in reversed(self._closers):
            closing = asyncio.ensure_future(closer())
            done, _ = await asyncio.wait([closing], timeout=CLOSE_WITHIN)
            if not done:
                log.warning("closing %s took over %g s; left behind", getattr(closer, "__qualname__", closer),
                            CLOSE_WITHIN)
            elif not closing.cancelled() and closing.exception() is not None:  # nor one failing to stop
                log.error("closing %s failed", getattr(closer, "__qualname__", closer), exc_info=closing.exception())
        await self.loop.shutdown(grace)
        if self._running is not None:
            self._running.cancel()
            await asyncio.wait([self._running], timeout=CLOSE_WITHIN)
            self._running = None

    def _follow_settings(self, changed: frozenset[str]) -> None:
        """A new workspace re-points the context and the tools; tools copy their settings when built. No
        await in here, so no turn sees the new settings half applied (Settings made the folder before saving;
        for a hand edit it is made in the background)."""
        workspace = workspace_of(self.home, self.config)
        if workspace != self.workspace:
            self.workspace = workspace
            self.context.workspace = workspace
            self.context.skills = SkillsLoader(skill_roots(workspace), lambda: self.config.skills.disabled)
            self.loop.spawn(asyncio.to_thread(ensure_workspace, workspace))
        fresh = default_tools(self.config, workspace, self.home)
        for name in fresh.names:
            self.tools.register(fresh.get(name))  # type: ignore[arg-type]


def workspace_of(h: Home, config: Config) -> Path:
    return Path(config.workspace).expanduser().resolve() if config.workspace else h.default_workspace


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
    workspace = workspace_of(h, config)
    ensure_workspace(workspace)
    bus = MessageBus()
    provider = LLMProvider(config)
    tools = default_tools(config, workspace, h)
    sessions = SessionStore(h.sessions_dir)
    skills = SkillsLoader(skill_roots(workspace), lambda: config.skills.disabled)
    context = ContextBuilder(workspace, skills)
    loop = AgentLoop(settings, bus, provider, tools, sessions, context, h.tool_outputs_dir)
    core = Core(h, settings, workspace, bus, provider, tools, sessions, context, loop)
    settings.subscribe(("workspace", "tools"), core._follow_settings)  # first: others read core.workspace
    attach_approvals(core)  # every tool call is gated; with nobody to ask until an entry point brings an asker
    core.scheduler = attach_scheduler(core)  # before the features that register jobs on it
    core.memory = attach_memory(core)
    core.mcp = attach_mcp(core)
    core.reminders = attach_reminders(core)
    core.heartbeat = attach_heartbeat(core)
    core.subagents = attach_subagents(core)
    return core

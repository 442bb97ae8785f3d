"""Assembles the agent core from the home and config. Shared by the CLI and the desktop app."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from desktop.agent.context import ContextBuilder
from desktop.agent.loop import AgentLoop
from desktop.workspace import ensure_workspace
from desktop.bus import MessageBus
from desktop.config import Config, LoadedConfig, load_config
from desktop.memory import Memory, attach_memory
from desktop.paths import Home, home
from desktop.providers.llm import LLMProvider
from desktop.session import SessionStore
from desktop.skills.loader import SkillsLoader, skill_roots
from desktop.tools.filesystem import EditFileTool, GlobTool, GrepTool, ListDirTool, ReadFileTool, WriteFileTool
from desktop.tools.message import MessageTool
from desktop.tools.registry import ToolRegistry
from desktop.tools.shell import ExecTool
from desktop.tools.web import WebFetchTool, WebSearchTool
from desktop.tools.path_guard import PathGuard


@dataclass
class Core:
    home: Home
    loaded: LoadedConfig
    workspace: Path
    bus: MessageBus
    provider: LLMProvider
    tools: ToolRegistry
    sessions: SessionStore
    context: ContextBuilder
    loop: AgentLoop
    memory: Memory

    @property
    def config(self) -> Config:
        return self.loaded.config

    def apply_config(self, new: Config) -> None:
        """Take new settings without a restart. Every part holds this same Config object and reads it at
        call time, so it is updated in place; a new workspace also re-points the tools and the context."""
        for f in dataclasses.fields(Config):
            setattr(self.config, f.name, getattr(new, f.name))
        workspace = workspace_of(self.home, self.config)
        fresh = default_tools(self.config, workspace)  # tools copy their settings when built
        for name in fresh.names:
            self.tools.register(fresh.get(name))  # type: ignore[arg-type]
        if workspace == self.workspace:
            return
        ensure_workspace(workspace)
        self.workspace = workspace
        self.context.workspace = workspace
        self.memory.store.workspace = workspace
        self.context.skills = SkillsLoader(skill_roots(workspace), lambda: self.config.skills.disabled)


def workspace_of(h: Home, config: Config) -> Path:
    return Path(config.workspace).expanduser().resolve() if config.workspace else h.default_workspace


def default_tools(config: Config, workspace: Path) -> ToolRegistry:
    extras = [root for source, root in skill_roots(workspace) if source != "workspace"]
    guard = PathGuard(workspace, config.tools.restrict_to_workspace, read_only_extras=extras,
                      protected=[workspace / "memory" / "history.jsonl", workspace / "memory" / ".dream_cursor"])
    return ToolRegistry([
        ReadFileTool(guard), WriteFileTool(guard), EditFileTool(guard), ListDirTool(guard),
        GlobTool(guard), GrepTool(guard),
        ExecTool(workspace, config.tools.exec.timeout, restrict=config.tools.restrict_to_workspace,
                 run_extras=tuple(extras)),
        WebFetchTool(), WebSearchTool(config.tools.web.search_provider),
        MessageTool(),
    ])


def build_core(h: Home | None = None, loaded: LoadedConfig | None = None) -> Core:
    """Everything the agent needs, wired once. Must be called with an asyncio loop available."""
    h = h or home()
    loaded = loaded or load_config(h.config_file)
    config = loaded.config
    workspace = workspace_of(h, config)
    ensure_workspace(workspace)
    bus = MessageBus()
    provider = LLMProvider(config)
    tools = default_tools(config, workspace)
    sessions = SessionStore(h.sessions_dir)
    skills = SkillsLoader(skill_roots(workspace), lambda: config.skills.disabled)
    context = ContextBuilder(workspace, skills)
    loop = AgentLoop(config, bus, provider, tools, sessions, context, h.tool_outputs_dir)
    memory = attach_memory(loop, workspace)
    return Core(h, loaded, workspace, bus, provider, tools, sessions, context, loop, memory)

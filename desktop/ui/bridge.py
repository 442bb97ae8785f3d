"""Turns bus events into a Qt signal and user actions into inbound messages.

The qasync loop runs on the GUI thread, so bus subscribers are called there and can emit directly."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from desktop.approvals import remove_rule, set_trusted
from desktop.config import Config, LoadedConfig
from desktop.core import Core, workspace_of
from desktop.kernel.bus import InboundMessage
from desktop.kernel.questions import Question, Questions
from desktop.kernel.taskset import TaskSet
from desktop.mcp import McpServers
from desktop.mcp.connection import ServerConnection
from desktop.mcp.importer import CLAUDE_DESKTOP_FILE, Imported, read_servers
from desktop.mcp.probe import probed
from desktop.mcp.settings import McpServerConfig
from desktop.providers.server_models import offered_models
from desktop.session.search import ChatHit, search_chats
from desktop.session.session import Session, SessionInfo
from desktop.skills.loader import SkillsLoader, set_skill_enabled
from desktop.subagents import Subagents
from desktop.subagents.events import TaskSnapshot
from desktop.tools.sandbox import SandboxMode
from desktop.tools.shell import ExecTool
from desktop.workspace.layout import ensure_workspace


@dataclass(frozen=True)
class McpStatus:
    """An MCP server as Settings shows it: its state, its tools' names and the last error."""

    state: str  # connected, connecting, failed, disabled, or stopped (not started by this app)
    tools: list[str]
    error: str | None = None

    @classmethod
    def of(cls, conn: ServerConnection) -> McpStatus:
        return cls(conn.state, [t.name for t in conn.tools], conn.error)


class CoreBridge(QObject):
    """Windows subscribe to `event` and call `send`; none of them touch the bus directly."""

    event = Signal(object)  # type: ignore[assignment]  # any desktop.kernel.bus event (QObject.event is a method)

    def __init__(self, core: Core, parent: QObject | None = None, questions: Questions | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self._questions = questions  # the approval questions the core posts (the app attaches them)
        self._unsubscribe = core.bus.subscribe(self.event.emit)
        self._pending = TaskSet("the bridge")

    def send(self, session_key: str, text: str, media: list[str] | None = None, *, redo: bool = False) -> None:
        """Queue a message for the agent; `session_key` is `channel:chat_id`. `redo`: it replaces the chat's last
        turn (Retry, Regenerate, Edit)."""
        channel, _, chat_id = session_key.partition(":")
        message = InboundMessage(channel, chat_id, text, list(media or []), redo=redo)
        self._pending.spawn(self.core.bus.publish_inbound(message))

    def session_title(self, session_key: str) -> str:
        """The chat's title as the sidebar shows it (its key until a title is known)."""
        return self.core.sessions.title_of(session_key)

    # ----- chats (sessions)
    def newest_message(self, session_key: str) -> int | None:
        """Where the chat's newest saved message is: a notification about the answer just saved opens it there."""
        return self.core.sessions.newest_index(session_key)

    async def list_chats(self) -> list[SessionInfo]:
        """Every saved chat, most recently active first (read from disk, off the GUI thread)."""
        return await self.core.sessions.list()

    async def load_chat(self, key: str) -> Session:
        return await self.core.sessions.load(key)

    async def rename_chat(self, key: str, title: str) -> None:
        session = await self.core.sessions.load(key)
        session.metadata["title"] = title
        await self.core.sessions.rewrite(session)

    async def delete_chat(self, key: str) -> None:
        """Delete a chat the person asked to delete; its background tasks stop with it."""
        self.core.get(Subagents).cancel_chat(key)
        await self.core.sessions.delete(key)

    def busy_chats(self) -> list[str]:
        """The chats whose turn is running now."""
        return self.core.loop.busy_sessions

    def commands(self) -> list[tuple[str, str]]:
        """The slash commands, (name, summary), read fresh: features add theirs."""
        return [(c.name, c.summary) for c in self.core.loop.commands.all()]

    # ----- background tasks (desktop/subagents); BackgroundTasks events say when they change
    def background_tasks(self) -> list[TaskSnapshot]:
        """Every chat's running, queued and recent background tasks as they are now."""
        return self.core.get(Subagents).snapshots()

    def cancel_task(self, task_id: str) -> None:
        """Stop a background task the person cancelled (nothing when it has ended already)."""
        task = self.core.get(Subagents).tasks.get(task_id)
        if task is not None and task.active:
            self.core.get(Subagents).cancel(task)

    def task_transcript(self, task_id: str) -> Path:
        """The task's whole run, one JSON message a line (it may not exist yet, or any more)."""
        return self.core.get(Subagents).transcript(task_id)

    # ----- skills and memory
    @property
    def skills(self) -> SkillsLoader:
        loader = self.core.context.skills
        assert loader is not None, "the core was built without a skills loader"
        return loader

    async def session_titles(self) -> dict[str, str]:
        """Every saved chat's title by session key (read from disk, off the GUI thread)."""
        return {info.key: info.title for info in await self.core.sessions.list()}

    async def search_chats(self, query: str) -> list[ChatHit]:
        """Saved chats whose title or messages contain `query` (all recent chats for ""), read off the GUI thread;
        cancelling the call stops the scan."""
        return await search_chats(self.core.sessions.directory, query)

    # ----- settings (all through the one writer, desktop/settings.py)
    async def read_settings(self) -> LoadedConfig:
        """config.yaml as it is on disk now (it may have been edited by hand), with its problems."""
        return await self.core.settings.read()

    async def save_settings(self, config: Config, *, keep_broken_copy: bool = False) -> Path | None:
        """Make the workspace folder, then write config.yaml and put it in force; returns a kept copy of a
        broken file. Raises OSError when either cannot be written, SettingsError for a value out of range."""
        await asyncio.to_thread(ensure_workspace, workspace_of(self.core.home, config))
        return await self.core.settings.save(config, keep_broken_copy=keep_broken_copy)

    async def set_skill_enabled(self, name: str, enabled: bool) -> None:
        await set_skill_enabled(self.core.settings, name, enabled)

    def current_model(self) -> str:
        """The model in force (a session-only `/model` included)."""
        return self.core.config.model

    async def model_choices(self) -> list[str]:
        return await offered_models(self.core.config)

    async def set_model(self, model: str) -> None:
        """Save `model` in config.yaml and put it in force (replacing a session-only `/model`)."""
        await self.core.settings.update(lambda config: setattr(config, "model", model))

    def on_settings(self, keys: tuple[str, ...], listener: Callable[[frozenset[str]], None]) -> Callable[[], None]:
        """Hear which of `keys` changed (a save, a hand edit, `/model`); returns an unsubscribe."""
        return self.core.settings.subscribe(keys, listener)

    # ----- approvals (desktop/approvals): the core asks, the windows answer
    def on_question(self, listener: Callable[[Question], None]) -> Callable[[], None]:
        """Hear each approval question as it is posted; returns an unsubscribe."""
        return self._questions.subscribe(listener) if self._questions is not None else lambda: None

    def pending_questions(self) -> list[Question]:
        return list(self._questions.pending) if self._questions is not None else []

    async def remove_approval_rule(self, rule: dict[str, str]) -> None:
        await remove_rule(self.core.settings, rule)

    async def set_server_trusted(self, server: str, trusted: bool) -> None:
        await set_trusted(self.core.settings, server, trusted)

    # ----- MCP servers (desktop/mcp): config.yaml through the settings writer, states from the live connections
    def mcp_status(self, name: str) -> McpStatus:
        servers = self.core.get(McpServers)
        conn = servers.servers.get(name)
        if conn is not None:
            return McpStatus.of(conn)
        return McpStatus("disabled" if name in servers.disabled else "stopped", [])

    async def save_mcp_server(self, name: str, server: McpServerConfig, replacing: str | None = None) -> None:
        """Add `name`, or change it (renamed from `replacing`); only that server is restarted."""

        def edit(config: Config) -> None:
            if replacing is not None and replacing != name:
                config.mcp.servers.pop(replacing, None)
            config.mcp.servers[name] = server

        await self.core.settings.update(edit)

    async def remove_mcp_server(self, name: str) -> None:
        def edit(config: Config) -> None:
            config.mcp.servers.pop(name, None)

        await self.core.settings.update(edit)

    async def set_mcp_server_enabled(self, name: str, enabled: bool) -> None:
        def edit(config: Config) -> None:
            if name in config.mcp.servers:
                config.mcp.servers[name].enabled = enabled

        await self.core.settings.update(edit)

    async def probe_mcp_server(self, name: str, server: McpServerConfig) -> McpStatus:
        """Connect once apart from the running connections (a disabled server too), list its tools, stop."""
        async with probed({name: dataclasses.replace(server, enabled=True)}, self.core.home.logs_dir) as probe:
            conn = probe.servers[name]
            return McpStatus.of(conn)

    def mcp_log_file(self, name: str) -> Path:
        """Where the server's stderr goes (it may not exist yet)."""
        return self.core.get(McpServers).log_file(name)

    async def claude_desktop_file(self) -> Path | None:
        """Claude Desktop's server list, when it is installed here."""
        path = CLAUDE_DESKTOP_FILE.expanduser()
        return path if await asyncio.to_thread(path.is_file) else None

    async def import_mcp_servers(self, path: Path) -> Imported:
        """Add the servers of a Claude Desktop / Cursor file; names already configured are skipped, never
        overwritten. Raises NotAServerList, SettingsError or OSError when nothing could be added."""
        existing = set((await self.core.settings.read()).config.mcp.servers)
        found = await asyncio.to_thread(read_servers, path, existing)
        if found.added:
            await self.core.settings.update(lambda config: config.mcp.servers.update(
                {k: v for k, v in found.added.items() if k not in config.mcp.servers}))
        return found

    @property
    def workspace(self) -> Path:
        return self.core.workspace

    @property
    def default_workspace(self) -> Path:
        return self.core.home.default_workspace
    async def command_mode(self) -> SandboxMode | None:
        """How `exec` commands are contained here (sandboxed, or not and why) and what network they get,
        for Settings to show; None when the exec tool is not loaded."""
        tool = self.core.tools.get("exec")
        return await tool.mode() if isinstance(tool, ExecTool) else None

    def close(self) -> None:
        self._unsubscribe()

"""Chats as files: `nanobot-tray chats list|export` (desktop/chats/cli.py) and the chat window's Export menu
(desktop/ui/chats) write a chat as Markdown or a self-contained HTML page (desktop/chats/export.py), or every
chat into one zip for a backup (desktop/chats/archive.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from desktop.chats.archive import file_title, write_archive
from desktop.chats.export import export
from desktop.kernel.host import Feature, Host
from desktop.session.session import SessionStore

__all__ = ["FEATURE", "ChatExport"]


class ChatExport:
    """Export from the running app, reading the live chat (what the window shows, a turn's last save included)."""

    def __init__(self, sessions: SessionStore, workspace: Callable[[], Path]) -> None:
        self.sessions = sessions
        self._workspace = workspace

    async def export(self, key: str, fmt: str, reasoning: bool = False) -> str:
        session = await self.sessions.load(key)
        messages = list(session.messages)
        return await asyncio.to_thread(export, session.title, messages, fmt, self._workspace(), reasoning)

    async def file_name(self, key: str, fmt: str) -> str:
        """The name a save dialog suggests for chat `key` in `fmt`: its title, made safe for a file name."""
        session = await self.sessions.load(key)
        return f"{file_title(str(session.metadata.get('title') or ''))}.{fmt}"

    async def archive(self, target: Path) -> int:
        """Every saved chat into the zip `target` (desktop/chats/archive.py); how many went in."""
        return await write_archive(self.sessions, await self.sessions.list(), self._workspace(), target)


def attach(host: Host) -> ChatExport:
    return ChatExport(host.sessions, lambda: host.workspace)


FEATURE = Feature("chats", ChatExport, attach, cli="desktop.chats.cli")

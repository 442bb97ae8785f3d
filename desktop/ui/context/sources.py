"""The `+` menu's submenus that other features bring (desktop/context/sources.py): an MCP server's resources.

A feature's Qt half offers its source once the core is built (`UiHost.on_ready`); every shelf's menu lists the
sources offered when it opens. One app runs in a process, so the list is the process's: a source offered again
under the same title (a newer core, in tests) takes the older one's place."""

from __future__ import annotations

from desktop.context.sources import Source

_offered: dict[str, Source] = {}


def offer(source: Source) -> None:
    _offered[source.title] = source


def offered() -> list[Source]:
    return list(_offered.values())

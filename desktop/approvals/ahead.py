"""Grants decided ahead: a run nobody watches (a reminder's turn, the heartbeat) has nobody to ask, so what it
may use without asking is decided before it starts, and a call that would ask fails at once instead of
waiting on a card nobody sees.

A grant names a tool (`exec`, `web_fetch`) or, for an MCP server's tools, the server (`mcp:SERVER`): what
`Tool.grant()` says. `allow` lets the run use it where it would ask; `deny` keeps the run from it even where
it would not. The feature that starts the run (reminders, the heartbeat) keeps the grants and registers the
run here for the chat its turn runs in; approvals read them, and note what the run wanted and lacked, so the
feature can tell the person exactly that and offer to allow it."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

Grant = Literal["allow", "deny"]
_NAME = re.compile(r"^[A-Za-z0-9][\w.\-]*$")


class GrantError(ValueError):
    """Not a tool name or `mcp:SERVER`; the message says what is expected."""


def grant_name(text: str) -> str:
    """The grant a person typed, checked: a tool's name or `mcp:SERVER`. A server is named as config.yaml names
    it, spaces and all ("My Notes", as Claude Desktop's and VS Code's files name theirs): only a blank name or a
    control character in it is refused."""
    name = text.strip()
    if name.startswith("mcp:"):
        server = name.removeprefix("mcp:").strip()
        if server and server.isprintable():
            return f"mcp:{server}"
    elif _NAME.match(name):
        return name
    raise GrantError(f"'{text}' is not a tool name (exec, web_fetch...) or mcp:SERVER for all of one MCP "
                     "server's tools")


@dataclass(eq=False)
class Unattended:
    """One run nobody watches: its grants, how the person grants more (in words, for the model), and the
    grants it wanted but lacked, in the order it wanted them."""

    grants: Mapping[str, Grant]
    how: str = ""
    wanted: list[str] = field(default_factory=list)

    def want(self, grant: str) -> None:
        if grant not in self.wanted:
            self.wanted.append(grant)


class UnattendedRuns:
    """The unattended runs in progress, by the session key their turns run in."""

    def __init__(self) -> None:
        self._runs: dict[str, list[Unattended]] = {}

    @contextmanager
    def running(self, session_key: str, grants: Mapping[str, Grant], how: str = "") -> Iterator[Unattended]:
        """Register a run for the block (the turn it asks for runs meanwhile)."""
        run = Unattended(dict(grants), how)
        self._runs.setdefault(session_key, []).append(run)
        try:
            yield run
        finally:
            self._runs[session_key].remove(run)
            if not self._runs[session_key]:
                del self._runs[session_key]

    def of(self, session_key: str) -> list[Unattended]:
        """The runs whose turns run in this chat now (usually one; due reminders of one chat share a turn)."""
        return list(self._runs.get(session_key, ()))

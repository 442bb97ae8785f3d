"""Where features hook into a chat's turns (`Host.hooks`): memory makes the history fit before a turn and
consolidates after it, subagents stop with the chat. The loop calls them; it names no feature."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from desktop.session.session import Session

SessionHook = Callable[[Session], Awaitable[None]]


@dataclass
class TurnHooks:
    before_turn: list[SessionHook] = field(default_factory=list)  # awaited before the prompt is built
    after_turn: list[SessionHook] = field(default_factory=list)  # run in the background once the reply is out
    on_set_aside: list[SessionHook] = field(default_factory=list)  # /new, with the conversation it set aside
    on_stop: list[Callable[[str], int]] = field(default_factory=list)  # /stop: stop the chat's other work, say how much

"""How full a chat's context is: what the next request to the model will carry before the person's new message,
part by part, against the context window, and where consolidation takes over (the chat window's gauge).

The parts are measured from what is really sent: the system prompt's own sections (ContextBuilder), the
chat's unconsolidated history in provider form (Session.history, what the loop puts before a new message) and
the tools' descriptions (ToolRegistry.schemas), with the estimate consolidation uses
(desktop/providers/token_bound.py, which errs high). Consolidation counts everything but the tools'
descriptions, so `counted` is exactly its estimate and `budget` the point at which it acts."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from desktop.agent.context import SEPARATOR, ContextBuilder
from desktop.config import Config
from desktop.memory.consolidator import budget_of, message_tokens
from desktop.providers.token_bound import text_bound
from desktop.session.session import Session

# The parts, in the order they are sent and shown.
SYSTEM, SKILLS, MEMORY, HISTORY, TOOL_RESULTS, TOOLS = (
    "system prompt", "skills", "memory", "history", "tool results", "tool descriptions")


@dataclass(frozen=True)
class ContextUse:
    parts: dict[str, int]  # tokens by part (at most about: the estimate errs high), in the order sent
    window: int  # the context window setting
    budget: int  # consolidation starts when `counted` reaches this (0 or less: it never does)
    reply: int  # the room kept for the answer (max_tokens)

    @property
    def used(self) -> int:
        return sum(self.parts.values())

    @property
    def counted(self) -> int:
        """What consolidation measures against its budget: all but the tools' descriptions."""
        return self.used - self.parts[TOOLS]


class ContextGauge:
    """Measures a chat's context from the live prompt parts; `measure` reads workspace files (blocking)."""

    def __init__(self, context: ContextBuilder, schemas: Callable[[], list[dict[str, Any]]],
                 config: Callable[[], Config]) -> None:
        self.context = context
        self.schemas = schemas
        self.config = config

    def measure(self, session: Session) -> ContextUse:
        """The parts of the next request for `session`, before its new message. Blocking: call in a thread."""
        sections = self.context.system_sections()
        system = message_tokens({"role": "system", "content": SEPARATOR.join(t for _, t in sections)})
        memory = _bound([t for s, t in sections if s == "memory"])
        skills = _bound([t for s, t in sections if s == "skills"])
        history = session.history()
        tool_results = sum(message_tokens(m) for m in history if m.get("role") == "tool")
        schemas = self.schemas()
        config = self.config()
        parts = {SYSTEM: system - memory - skills, SKILLS: skills, MEMORY: memory,
                 HISTORY: sum(message_tokens(m) for m in history) - tool_results, TOOL_RESULTS: tool_results,
                 TOOLS: text_bound(json.dumps(schemas)) if schemas else 0}
        return ContextUse(parts, config.context_window_tokens, budget_of(config), config.max_tokens)


def _bound(texts: list[str]) -> int:
    return text_bound(SEPARATOR.join(texts)) if texts else 0

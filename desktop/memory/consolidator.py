"""Token-pressure consolidation: old turns of a session are summarised into history.jsonl so the
prompt keeps fitting the model's context window. Nothing is dropped: a failed summary is archived raw."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from desktop.agent.context import ContextBuilder, prompt_text
from desktop.config import Config
from desktop.memory.store import HistoryEntry, MemoryStore, format_messages
from desktop.providers.llm import LLMProvider
from desktop.session import Session, SessionStore
from desktop.tokens import estimate_messages

log = logging.getLogger(__name__)

SAFETY_TOKENS = 1024  # room for the tokenizer's estimation error
MAX_CHUNK_MESSAGES = 60
MAX_ROUNDS = 5
Spawn = Callable[[Awaitable[Any]], asyncio.Task[Any]]


def budget_of(config: Config) -> int:
    """Tokens the prompt may use: the window minus the reply's room minus a safety margin."""
    return config.context_window_tokens - config.max_tokens - SAFETY_TOKENS


def pick_boundary(messages: list[dict[str, Any]], costs: list[int], need: int,
                  max_chunk: int = MAX_CHUNK_MESSAGES) -> int | None:
    """Where to cut: the index of a user message, so whole turns are archived. The first cut that
    removes `need` tokens, else the furthest one within `max_chunk` messages; None when there is none."""
    removed = 0
    best = None
    for index in range(1, min(len(messages), max_chunk + 1)):
        removed += costs[index - 1]
        if messages[index].get("role") != "user":
            continue
        best = index
        if removed >= need:
            break
    return best


class Consolidator:
    """Hooks for the agent loop: `after_turn` (background), `before_turn` (only when the prompt would
    not fit) and `before_clear` (/new). One consolidation per session at a time."""

    def __init__(self, store: MemoryStore, provider: LLMProvider, sessions: SessionStore,
                 context: ContextBuilder, config: Config, spawn: Spawn) -> None:
        self.store = store
        self.provider = provider
        self.sessions = sessions
        self.context = context
        self.config = config
        self._spawn = spawn
        self._locks: dict[str, asyncio.Lock] = {}
        self._epochs: dict[str, int] = {}  # bumped by /new: a running consolidation must not touch the new session
        self._in_flight: dict[str, int] = {}  # end of the chunk being archived right now, per session

    @property
    def budget(self) -> int:
        return budget_of(self.config)

    async def after_turn(self, session: Session) -> None:
        if self._lock(session.key).locked():
            return  # the running one re-measures every round and will see this turn too
        async with self._lock(session.key):
            await self.consolidate(session)

    async def before_turn(self, session: Session) -> None:
        lock = self._lock(session.key)
        if not lock.locked() and await self.estimate(session) < self.budget:
            return
        async with lock:
            await self.consolidate(session)

    async def before_clear(self, session: Session) -> None:
        """/new: hand the unarchived messages to a background archive and return at once."""
        start = max(session.last_consolidated, self._in_flight.get(session.key, 0))
        snapshot = [dict(m) for m in session.messages[start:]]
        self._epochs[session.key] = self._epochs.get(session.key, 0) + 1
        if any(m.get("role") == "user" for m in snapshot):
            self._spawn(self._archive_cleared(session.key, snapshot))

    async def estimate(self, session: Session) -> int:
        estimate, _ = await asyncio.to_thread(self._measure, session.messages[session.last_consolidated:])
        return estimate

    async def consolidate(self, session: Session) -> int:
        """Archive the oldest turns while the prompt estimate is at or over the budget, down to half of it.
        Returns how many chunks were archived."""
        budget = self.budget
        if budget <= 0:
            log.warning("context_window_tokens %d leaves no room after max_tokens %d: not consolidating",
                        self.config.context_window_tokens, self.config.max_tokens)
            return 0
        key, target = session.key, budget // 2
        epoch = self._epochs.get(key, 0)
        for round_ in range(MAX_ROUNDS):
            start = session.last_consolidated
            recent = session.messages[start:]
            estimate, costs = await asyncio.to_thread(self._measure, recent)
            if round_ == 0 and estimate < budget:
                return 0
            if estimate <= target:
                return round_
            cut = pick_boundary(recent, costs, estimate - target)
            if cut is None:
                log.warning("consolidation of %s stopped: no user turn starts within %d messages",
                            key, MAX_CHUNK_MESSAGES)
                return round_
            log.info("consolidation round %d for %s: %d/%d tokens, chunk of %d messages",
                     round_ + 1, key, estimate, budget, cut)
            self._in_flight[key] = start + cut
            try:
                await self.archive(key, recent[:cut])
            finally:
                self._in_flight.pop(key, None)
            if self._epochs.get(key, 0) != epoch:
                return round_ + 1  # /new emptied the session meanwhile; the chunk is archived, nothing more to do
            session.metadata["last_consolidated"] = start + cut
            await self.sessions.rewrite(session)
        return MAX_ROUNDS

    async def archive(self, key: str, messages: list[dict[str, Any]]) -> HistoryEntry:
        """Summarise messages into one history entry; if the model fails, archive them verbatim."""
        transcript = format_messages(messages)
        try:
            instructions = await asyncio.to_thread(prompt_text, "consolidate.md", self.context.workspace)
            response = await self.provider.chat([{"role": "system", "content": instructions},
                                                 {"role": "user", "content": transcript}])
            content = response.content.strip()
            if not content:
                raise ValueError("the model returned an empty summary")
        except Exception as exc:  # any failure still archives the messages
            log.warning("summary for %s failed (%s); archiving %d messages raw", key, exc, len(messages))
            content = raw_archive(transcript, str(exc))
        return await asyncio.to_thread(self.store.append_history, key, content)

    async def _archive_cleared(self, key: str, messages: list[dict[str, Any]]) -> None:
        try:
            await self.archive(key, messages)
        except asyncio.CancelledError:  # the app is quitting: the session is already empty, keep the text
            self.store.append_history(key, raw_archive(format_messages(messages), "the app was closing"))
            raise

    def _measure(self, recent: list[dict[str, Any]]) -> tuple[int, list[int]]:
        """Prompt estimate (system prompt + history as the loop sends it) and each message's share.
        Messages before the first user turn are not sent, so they cost nothing."""
        model = self.config.model
        system = estimate_messages([{"role": "system", "content": self.context.system_prompt()}], model)
        first_user = next((i for i, m in enumerate(recent) if m.get("role") == "user"), len(recent))
        costs = [0] * first_user + [estimate_messages([m], model) for m in recent[first_user:]]
        return system + sum(costs), costs

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())


def raw_archive(transcript: str, reason: str) -> str:
    return f"[Raw archive: no summary could be made ({reason})]\n{transcript}"

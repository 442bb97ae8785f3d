"""Token-pressure consolidation: old turns of a session are summarised into history.jsonl so the
prompt keeps fitting the model's context window. Nothing is dropped: a failed summary is archived raw."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from desktop.agent.context import ContextBuilder
from desktop.config import Config
from desktop.kernel import work
from desktop.memory.store import HistoryEntry, MemoryStore, format_messages
from desktop.providers.llm import LLMProvider
from desktop.providers.token_bound import messages_bound
from desktop.session.session import Session, SessionStore
from desktop.workspace.layout import prompt_text

log = logging.getLogger(__name__)

SAFETY_TOKENS = 1024  # room beside the estimate (it errs high, but not for every tokenizer there is)
MAX_CHUNK_MESSAGES = 60
MAX_ROUNDS = 5
Spawn = Callable[[Awaitable[Any]], asyncio.Future[Any]]


def budget_of(config: Config) -> int:
    """Tokens the prompt may use: the window minus the reply's room minus a safety margin."""
    return config.context_window_tokens - config.max_tokens - SAFETY_TOKENS


def pick_boundary(messages: list[dict[str, Any]], keep_from: int,
                  max_chunk: int = MAX_CHUNK_MESSAGES) -> int | None:
    """Where to cut: the index of a user message, so whole turns are archived. The first one at or after
    `keep_from` (what stays then fits), else the furthest within `max_chunk` messages; None if there is none."""
    best = None
    for index in range(1, min(len(messages), max_chunk + 1)):
        if messages[index].get("role") != "user":
            continue
        best = index
        if index >= keep_from:
            break
    return best


class Consolidator:
    """Hooks for the agent loop: `after_turn` (background), `before_turn` (only when the prompt would
    not fit) and `set_aside` (/new). One consolidation per session at a time."""

    def __init__(self, store: MemoryStore, provider: LLMProvider, sessions: SessionStore,
                 context: ContextBuilder, config: Config, spawn: Spawn) -> None:
        self.store = store
        self.provider = provider
        self.sessions = sessions
        self.context = context
        self.config = config
        self._spawn = spawn
        self._locks: dict[str, asyncio.Lock] = {}
        # End of the chunk being archived right now, by id(session): /new changes a session's key meanwhile.
        self._in_flight: dict[int, int] = {}

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
        recent = session.messages[session.last_consolidated:]
        if not lock.locked() and await asyncio.to_thread(self._keep_from, recent, self.budget - 1) == 0:
            return
        async with lock:
            await self.consolidate(session)

    async def set_aside(self, session: Session) -> None:
        """/new set this conversation aside: archive what is not in memory yet, in the background, and mark
        it consolidated, so continuing that chat later does not archive it twice."""
        start = max(session.last_consolidated, self._in_flight.get(id(session), 0))
        snapshot = [dict(m) for m in session.messages[start:]]
        if any(m.get("role") == "user" for m in snapshot):
            self._spawn(self._archive_set_aside(session, snapshot, start + len(snapshot)))

    async def estimate(self, session: Session) -> int:
        """The whole prompt estimate (the decisions themselves only count the newest messages they need)."""
        recent = session.messages[session.last_consolidated:]
        return await asyncio.to_thread(lambda: self._system_tokens() + sum(self._costs(recent)))

    async def consolidate(self, session: Session) -> int:
        """Archive the oldest turns while the prompt estimate is at or over the budget, down to half of it.
        Returns how many chunks were archived."""
        budget = self.budget
        if budget <= 0:
            log.warning("context_window_tokens %d leaves no room after max_tokens %d: not consolidating",
                        self.config.context_window_tokens, self.config.max_tokens)
            return 0
        key, target = session.key, budget // 2
        for round_ in range(MAX_ROUNDS):
            start = session.last_consolidated
            recent = session.messages[start:]
            if round_ == 0 and await asyncio.to_thread(self._keep_from, recent, budget - 1) == 0:
                return 0  # under the budget
            keep_from = await asyncio.to_thread(self._keep_from, recent, target)
            if keep_from == 0:
                return round_  # at or under half the budget
            cut = pick_boundary(recent, keep_from)
            if cut is None:
                log.warning("consolidation of %s stopped: no user turn starts within %d messages",
                            key, MAX_CHUNK_MESSAGES)
                return round_
            log.info("consolidation round %d for %s (budget %d tokens): archiving %d of %d messages",
                     round_ + 1, key, budget, cut, len(recent))
            self._in_flight[id(session)] = start + cut
            try:
                await self.archive(session.key, recent[:cut])
            finally:
                self._in_flight.pop(id(session), None)
            session.metadata["last_consolidated"] = max(session.last_consolidated, start + cut)
            await self.sessions.rewrite(session)
        return MAX_ROUNDS

    async def archive(self, key: str, messages: list[dict[str, Any]]) -> HistoryEntry:
        """Summarise messages into one history entry; if the model fails, archive them verbatim."""
        transcript = format_messages(messages)
        try:
            instructions = await asyncio.to_thread(prompt_text, "consolidate.md", self.context.workspace)
            with work.doing(work.Source.CONSOLIDATION, key):
                response = await self.provider.chat([{"role": "system", "content": instructions},
                                                     {"role": "user", "content": transcript}])
            content = response.content.strip()
            if not content:
                raise ValueError("the model returned an empty summary")
        except Exception as exc:  # any failure still archives the messages
            log.warning("summary for %s failed (%s); archiving %d messages raw", key, exc, len(messages))
            content = raw_archive(transcript, str(exc))
        return await asyncio.to_thread(self.store.append_history, key, content)

    async def _archive_set_aside(self, session: Session, messages: list[dict[str, Any]], end: int) -> None:
        try:
            await self.archive(session.key, messages)
        except asyncio.CancelledError:  # the app is quitting: keep the text in history all the same
            self.store.append_history(session.key, raw_archive(format_messages(messages), "the app was closing"))
            raise
        session.metadata["last_consolidated"] = max(session.last_consolidated, end)
        await self.sessions.rewrite(session)

    def _keep_from(self, recent: list[dict[str, Any]], limit: int) -> int:
        """The oldest index from which the prompt (system + recent[i:]) stays within `limit` tokens; 0 when
        all of it fits. Counts from the newest message back and stops at the limit, so the cost of the
        check grows with the budget, not with the length of the session."""
        used = self._system_tokens()
        first_user = next((i for i, m in enumerate(recent) if m.get("role") == "user"), len(recent))
        index = len(recent)
        while index > first_user:
            cost = message_tokens(recent[index - 1])
            if used + cost > limit:
                return index
            used += cost
            index -= 1
        return 0 if used <= limit else len(recent)

    def _costs(self, recent: list[dict[str, Any]]) -> list[int]:
        """Each message's share; messages before the first user turn are not sent, so they cost nothing."""
        first_user = next((i for i, m in enumerate(recent) if m.get("role") == "user"), len(recent))
        return [0] * first_user + [message_tokens(m) for m in recent[first_user:]]

    def _system_tokens(self) -> int:
        return _text_message_tokens(self.context.system_prompt())

    def _lock(self, key: str) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())


def message_tokens(message: dict[str, Any]) -> int:
    """One message's share of the estimate. Plain text messages are remembered by their text, so the
    estimate that runs before every turn and in every round costs a dictionary lookup per message."""
    content = message.get("content")
    if isinstance(content, str) and not message.get("tool_calls"):
        return _text_message_tokens(content)
    return messages_bound([message])


@lru_cache(maxsize=50_000)
def _text_message_tokens(content: str) -> int:
    return messages_bound([{"content": content}])


def raw_archive(transcript: str, reason: str) -> str:
    return f"[Raw archive: no summary could be made ({reason})]\n{transcript}"

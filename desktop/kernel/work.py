"""Whose work a model call is: the source its tokens are counted under, carried by the asyncio context.

Whoever starts the work says so once, for the task that runs it: the loop for a turn (from the chat's channel
and the message's kind), a background task, Dream, consolidation. Every model call made inside inherits it,
however deep (the runner, a tool, a hook), so the provider learns what it serves without being told at each
call. A task started from inside copies the context: work of another kind sets its own.

`Work` also counts the tokens of its run, so one runaway reminder or background task can be stopped
(`budgets.per_run_tokens`) without stopping the others, and their known price, so a background task can say
what it cost."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from desktop.kernel.bus import MessageKind
from desktop.kernel.channels import Channel, channel_of


class Source(enum.StrEnum):
    CHAT = "chat"  # anything typed: the chat window, the quick prompt, the command line
    REMINDER = "reminder"  # a scheduled job's turn in the chat that made it
    HEARTBEAT = "heartbeat"  # the periodic look at HEARTBEAT.md
    SUBAGENT = "subagent"  # a background task, and the turn that tells its chat the result
    DREAM = "dream"  # tidying long-term memory
    CONSOLIDATION = "consolidation"  # summarising a long chat's older part so it fits the context window

    @property
    def unattended(self) -> bool:
        """Work that runs while nobody watches, which the daily budgets hold back. Consolidation is not: it
        serves the chat whose history it shortens."""
        return self in (Source.REMINDER, Source.HEARTBEAT, Source.SUBAGENT, Source.DREAM)


@dataclass(eq=False)
class Work:
    """One run of work: where its calls are counted, for which chat, and how many tokens it has used."""

    source: Source
    session: str = ""  # the chat (session key) it serves; "" for none
    tokens: int = 0  # prompt and completion tokens of this run's calls so far
    cost_usd: float | None = None  # the known price of those calls; None while none of them had one


_current: ContextVar[Work | None] = ContextVar("work", default=None)


def current() -> Work:
    """The work of the running task; a call nobody labelled (a connection test) counts as typed."""
    return _current.get() or Work(Source.CHAT)


def begin(work: Work) -> None:
    """Label the rest of the running task (a turn, a background task): call it at the task's start."""
    _current.set(work)


@contextmanager
def doing(source: Source, session: str = "") -> Iterator[Work]:
    """Label a stretch of code inside a task whose work is another (Dream run from a chat's /dream)."""
    work = Work(source, session)
    token = _current.set(work)
    try:
        yield work
    finally:
        _current.reset(token)


def of_turn(session_key: str, kind: MessageKind) -> Work:
    """A turn's work: typed is chat, a background task's report is subagent, a scheduled message is the
    heartbeat in the app's own chat and a reminder anywhere else."""
    if kind is MessageKind.SUBAGENT_RESULT:
        source = Source.SUBAGENT
    elif kind is MessageKind.SCHEDULED:
        source = Source.HEARTBEAT if channel_of(session_key) is Channel.SYSTEM else Source.REMINDER
    else:
        source = Source.CHAT
    return Work(source, session_key)

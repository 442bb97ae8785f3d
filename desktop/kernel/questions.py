"""The one door for asking the person: the core posts a question and awaits its answer; a user interface
answers it.

A feature awaits `Questions.ask(request)` (approvals are the first client: "may this command run?").
Whoever shows questions (the chat's card, the quick prompt, a notification, a terminal) subscribes, shows
`question.request` and calls `question.answer(...)`. The first answer counts; a question the asker stops
waiting for (its timeout, a stopped turn) is closed, listeners hear that through `Question.on_close`, and
`timed_out` says whether the timeout passed (the chat was stopped otherwise), so a card can say what
happened. While a question waits, its turn gives up its concurrent-turn place (`waiting`). Nobody
listening, or Do not disturb for work nobody started just now whose chat is not in front of the person,
means the question is not asked at all (`NotAsked`): the asker says so in its own words. Qt-free."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from desktop.kernel.bus import MessageKind
from desktop.kernel.channels import channel_of

log = logging.getLogger(__name__)
# How early a timer may fire: Qt's coarse timers (qasync's) by up to 5% of their interval, plus the
# millisecond it rounds down. A question closed this near its deadline counts as timed out.
EARLY_SHARE, EARLY_SECONDS = 0.05, 0.002
Waiting = Callable[[str], AbstractAsyncContextManager[None]]  # around a wait for the person, by session key


class Request(Protocol):
    """What every question says about itself; each asker's request type adds what it shows."""

    @property
    def session_key(self) -> str: ...  # the chat (or background work) that asks

    @property
    def kind(self) -> MessageKind: ...  # what started the turn that asks (a reminder, a background result...)

    @property
    def timeout(self) -> float: ...  # seconds the asker waits before it counts the question as unanswered

    @property
    def deadline(self) -> float: ...  # the event loop's time when it does


R = TypeVar("R", bound=Request)


class NotAsked(Exception):
    """The question was put to nobody: nobody listens here, or (`quiet`) Do not disturb keeps work nobody
    started just now from asking."""

    def __init__(self, quiet: bool) -> None:
        super().__init__("Do not disturb is on" if quiet else "nobody listens for questions here")
        self.quiet = quiet


def background_key(session_key: str) -> bool:
    """A session of background work (a subagent's, the heartbeat's), not a chat a person typed in."""
    channel = channel_of(session_key)
    return channel is None or not channel.foreground


def unattended(request: Request) -> bool:
    """Whether nobody started this just now: a turn the app started (a reminder, the heartbeat, a background
    task's report, even in the chat that made it) or a background task's own work."""
    return request.kind is not MessageKind.USER or background_key(request.session_key)


@dataclass(eq=False)
class Question(Generic[R]):
    request: R
    future: asyncio.Future[str] = field(repr=False)
    timed_out: bool = False  # closed unanswered because the asker's timeout passed

    @property
    def open(self) -> bool:
        return not self.future.done()

    @property
    def answered(self) -> str | None:
        """The answer given, or None while open or when closed unanswered (timed out, stopped)."""
        if not self.future.done() or self.future.cancelled():
            return None
        return self.future.result()

    def answer(self, answer: str) -> None:
        """Answer it (later answers, or one after it closed, are ignored)."""
        if not self.future.done():
            self.future.set_result(answer)

    def on_close(self, callback: Callable[[Question[R]], None]) -> None:
        """Call `callback(self)` once it is answered or closed unanswered (at once if it already is)."""
        self.future.add_done_callback(lambda _f: callback(self))


Listener = Callable[[Question[Any]], None]


class Questions:
    """Pending questions by arrival. `quiet()` says Do not disturb is on, `in_sight(key)` that the chat a
    session's questions belong in is in front of the person (a background task asking while its chat is
    watched still asks under Do not disturb); `waiting(key)` wraps each wait for the person (the agent loop
    gives up the turn's place meanwhile)."""

    def __init__(self, quiet: Callable[[], bool] = lambda: False, waiting: Waiting | None = None) -> None:
        self.quiet = quiet
        self.in_sight: Callable[[str], bool] = lambda _key: False
        self.waiting: Waiting = waiting or (lambda _key: nullcontext())
        self.pending: list[Question[Any]] = []
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear each new question; returns an unsubscribe. Pending ones are in `pending`."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def of(self, session_key: str) -> list[Question[Any]]:
        return [q for q in self.pending if q.request.session_key == session_key]

    async def ask(self, request: Request) -> str:
        """Post the question and wait for its answer (the asker's timeout cancels the wait). Raises NotAsked
        when it cannot be put to anyone."""
        if not self._listeners:
            raise NotAsked(quiet=False)
        if unattended(request) and self.quiet() and not self.in_sight(request.session_key):
            raise NotAsked(quiet=True)
        loop = asyncio.get_running_loop()
        question: Question[Any] = Question(request, loop.create_future())
        self.pending.append(question)
        for listener in list(self._listeners):
            try:
                listener(question)
            except Exception:  # one broken view must not leave the question unshown elsewhere
                log.exception("showing a question failed")
        async with self.waiting(request.session_key):
            try:
                return await asyncio.shield(question.future)
            finally:
                self.pending.remove(question)
                if not question.future.done():  # closed unanswered: its card says so
                    slack = EARLY_SHARE * request.timeout + EARLY_SECONDS
                    question.timed_out = 0 < request.deadline <= loop.time() + slack
                    question.future.cancel()

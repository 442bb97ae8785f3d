"""Approval questions the core posts and a user interface answers (the app's asker).

The gate awaits `Questions.ask(request)`; whoever shows questions (the chat's card, the quick prompt, a
notification) subscribes, shows `question.request` and calls `question.answer(...)`. The first answer
counts; a question the gate stops waiting for (its timeout, a stopped turn) is closed, and listeners
hear that through `Question.on_close` so its card can say what happened. Qt-free."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from desktop.approvals import Answer, ApprovalRequest
from desktop.tools.base import ToolError

log = logging.getLogger(__name__)
Listener = Callable[["Question"], None]
FOREGROUND_CHANNELS = ("desktop", "quick", "cli")  # chats a person typed in; the rest is background work


@dataclass(eq=False)
class Question:
    request: ApprovalRequest
    future: asyncio.Future[Answer] = field(repr=False)

    @property
    def open(self) -> bool:
        return not self.future.done()

    @property
    def answered(self) -> Answer | None:
        """The answer given, or None while open or when closed unanswered (timed out, stopped)."""
        if not self.future.done() or self.future.cancelled():
            return None
        return self.future.result()

    def answer(self, answer: Answer) -> None:
        """Answer it (later answers, or one after it closed, are ignored)."""
        if not self.future.done():
            self.future.set_result(answer)

    def on_close(self, callback: Callable[[Question], None]) -> None:
        """Call `callback(self)` once it is answered or closed unanswered (at once if it already is)."""
        self.future.add_done_callback(lambda _f: callback(self))


class Questions:
    """Pending questions by arrival. `quiet()` says Do not disturb is on: background work (not a chat a
    person typed in) is then denied at once instead of asking."""

    def __init__(self, quiet: Callable[[], bool] = lambda: False) -> None:
        self.quiet = quiet
        self.pending: list[Question] = []
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Hear each new question; returns an unsubscribe. Pending ones are in `pending`."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def of(self, session_key: str) -> list[Question]:
        return [q for q in self.pending if q.request.session_key == session_key]

    async def ask(self, request: ApprovalRequest) -> Answer:
        """Post the question and wait for its answer (the gate's timeout cancels the wait)."""
        channel = request.session_key.partition(":")[0]
        if channel not in FOREGROUND_CHANNELS and self.quiet():
            raise ToolError(f"{request.tool} needs the user's approval ({request.reason}), but Do not disturb is "
                            "on, so background work is not allowed to ask: it was denied")
        question = Question(request, asyncio.get_running_loop().create_future())
        self.pending.append(question)
        for listener in list(self._listeners):
            try:
                listener(question)
            except Exception:  # one broken view must not leave the question unshown elsewhere
                log.exception("showing an approval question failed")
        try:
            return await asyncio.shield(question.future)
        finally:
            self.pending.remove(question)
            if not question.future.done():
                question.future.cancel()  # closed unanswered: its card says so

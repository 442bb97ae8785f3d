"""Approval questions the core posts and a user interface answers (the app's asker).

The gate awaits `Questions.ask(request)`; whoever shows questions (the chat's card, the quick prompt, a
notification) subscribes, shows `question.request` and calls `question.answer(...)`. The first answer
counts; a question the gate stops waiting for (its timeout, a stopped turn) is closed, and listeners
hear that through `Question.on_close`, and `timed_out` says whether the gate gave up waiting (the chat was
stopped otherwise), so its card can say what happened. Qt-free."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from desktop.approvals import Answer, ApprovalRequest
from desktop.kernel.bus import MessageKind, Publish
from desktop.kernel.notices import Notice, OpenChat
from desktop.tools.base import ToolError

log = logging.getLogger(__name__)
Listener = Callable[["Question"], None]
# How early a timer may fire: Qt's coarse timers (qasync's) by up to 5% of their interval, plus the
# millisecond it rounds down. A question closed this near its deadline counts as timed out.
EARLY_SHARE, EARLY_SECONDS = 0.05, 0.002
FOREGROUND_CHANNELS = ("desktop", "quick", "cli")  # chats a person typed in; the rest is background work


def background_key(session_key: str) -> bool:
    """A session of background work (a subagent's, the heartbeat's), not a chat a person typed in."""
    return session_key.partition(":")[0] not in FOREGROUND_CHANNELS


@dataclass(eq=False)
class Question:
    request: ApprovalRequest
    future: asyncio.Future[Answer] = field(repr=False)
    timed_out: bool = False  # closed unanswered because the gate's timeout passed

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
    """Pending questions by arrival. `quiet()` says Do not disturb is on: background work (`unattended`) is
    then denied at once instead of asking."""

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
        if unattended(request) and self.quiet():
            raise ToolError(f"{request.tool} needs the user's approval ({request.reason}), but Do not disturb is "
                            "on, so background work is not allowed to ask: it was denied")
        loop = asyncio.get_running_loop()
        question = Question(request, loop.create_future())
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
            if not question.future.done():  # closed unanswered: its card says so
                slack = EARLY_SHARE * request.timeout + EARLY_SECONDS
                question.timed_out = 0 < request.deadline <= loop.time() + slack
                question.future.cancel()


def unattended(request: ApprovalRequest) -> bool:
    """Whether nobody started this just now: a turn the app started (a reminder, the heartbeat, a background
    task's report, even in the chat that made it) or a background task's own work."""
    return request.kind is not MessageKind.USER or background_key(request.session_key)


def notify_unseen(questions: Questions, on_screen: Callable[[str], bool], title_of: Callable[[str], str],
                  publish: Publish) -> None:
    """Ask with a notice when the question's chat is not on screen: Allow once / Deny buttons where the
    notification service has them; a click opens the chat, where the card waits."""
    def posted(question: Question) -> None:
        request = question.request
        key = request.session_key
        if on_screen(key):
            return
        background = background_key(key)
        publish(Notice(f"{title_of(key)}: allow {request.tool}?", f"{request.shown[:300]}\n(asking because "
                       f"{request.reason})", None if background else OpenChat(key),
                       (("allow", "Allow once"), ("deny", "Deny")),
                       lambda action: question.answer("once" if action == "allow" else "deny"),
                       lambda withdraw: question.on_close(lambda _q: withdraw())))  # answered in the chat: gone
    questions.subscribe(posted)

"""Approval questions shown as notices while their chat is not on screen (the app's choice, made here until
the app's own approvals slice takes it over). The questions themselves go through the one door for asking
the person, desktop/kernel/questions.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from desktop.kernel.bus import Publish
from desktop.kernel.notices import Notice, OpenChat
from desktop.kernel.questions import Question, Questions, background_key


def notify_unseen(questions: Questions, on_screen: Callable[[str], bool], title_of: Callable[[str], str],
                  publish: Publish) -> None:
    """Ask with a notice when the question's chat is not on screen: Allow once / Deny buttons where the
    notification service has them; a click opens the chat, where the card waits."""
    def posted(question: Question[Any]) -> None:
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

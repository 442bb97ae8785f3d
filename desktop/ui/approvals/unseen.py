"""Questions nobody is looking at become notifications: a card counts as seen only while its chat is in front
of the person (`UiHost.in_front`: the chat window active and unminimised on that chat, or the quick prompt on
it). A question is announced once, at once when it comes out of sight or later when it goes out of sight (the
window hidden, minimised or covered, another chat shown); the notification offers Allow once / Deny where the
notification service has buttons, a click opens the chat where the card waits, and answering it either way
takes the notification away."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QGuiApplication

from desktop.approvals import ApprovalRequest
from desktop.kernel.notices import Notice, OpenChat
from desktop.kernel.questions import Question, background_key
from desktop.ui.host import UiHost

SHOWN_CHARS = 300  # of the command or path, in the notification's text


class UnseenQuestions(QObject):
    def __init__(self, host: UiHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._waiting: list[Question[ApprovalRequest]] = []  # open and not announced yet
        host.bridge.questions.subscribe(self._posted)
        app = QGuiApplication.instance()
        assert isinstance(app, QGuiApplication)
        app.focusWindowChanged.connect(lambda _window: self.check())  # hidden, minimised, covered: focus moved

    def check(self) -> None:
        """Announce the questions that are out of sight now (called when what is in front may have changed)."""
        for question in list(self._waiting):
            self._check(question)

    def _posted(self, question: Question[Any]) -> None:
        if not isinstance(question.request, ApprovalRequest):  # the approvals' door: no other asker yet
            return
        self._waiting.append(question)
        question.on_close(self._forget)
        self._check(question)

    def _forget(self, question: Question[ApprovalRequest]) -> None:
        if question in self._waiting:
            self._waiting.remove(question)

    def _check(self, question: Question[ApprovalRequest]) -> None:
        bridge = self._host.bridge
        request = question.request
        key = request.session_key
        owner = bridge.conversations.owner(key)
        if not question.open or self._host.in_front(owner):
            return
        self._forget(question)
        task = bridge.conversations.task_of(key)
        # The chat's title in quotes, so one that ends in its own "?" or ":" still reads: “Is it free?” — allow exec?
        who = (f"“{bridge.session_title(owner)}” · “{task.label}”" if task is not None
               else f"“{bridge.session_title(key)}”")
        chatless = background_key(owner)  # the app's own job: no chat to open
        self._host.notify(Notice(
            f"{who} — allow {request.label}?", f"{request.shown[:SHOWN_CHARS]}\n(asking because {request.reason})",
            None if chatless else OpenChat(owner), (("allow", "Allow once"), ("deny", "Deny")),
            lambda action: question.answer("once" if action == "allow" else "deny"),
            lambda withdraw: question.on_close(lambda _q: withdraw())))  # answered on the card: gone

"""Approvals in the app: the questions the core asks before a tool runs (desktop/approvals) answered on cards
above the chat's composer (cards.py, also in the quick prompt), by a notification while the card is out of
sight (unseen.py), and the list of what runs without asking on Settings' Tools page (rules.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop.ui.host import UiFeature, UiHost

if TYPE_CHECKING:
    from desktop.ui.approvals.cards import ApprovalCards
    from desktop.ui.approvals.unseen import UnseenQuestions


def attach_ui(host: UiHost) -> None:
    unseen: list[UnseenQuestions] = []  # one, once the core is built

    def ready() -> None:
        from desktop.ui.approvals.unseen import UnseenQuestions

        unseen.append(UnseenQuestions(host, host.bridge))
        questions = host.bridge.questions  # under Do not disturb, background work asks only in the chat in front
        questions.in_sight = lambda key: host.in_front(host.bridge.conversations.owner(key))

    def recheck() -> None:
        for watcher in unseen:
            watcher.check()

    def build() -> ApprovalCards:
        from desktop.ui.approvals.cards import ApprovalCards

        cards = ApprovalCards(host.bridge, with_background=True)
        cards.sight_changed.connect(recheck)  # another chat shown, the window hidden, minimised or covered
        return cards

    host.on_ready(ready)
    host.add_chat_panel(build)


UI_FEATURE = UiFeature("approvals", attach_ui)

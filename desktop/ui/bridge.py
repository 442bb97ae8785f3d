"""Turns bus events into a Qt signal and user actions into inbound messages.

The qasync loop runs on the GUI thread, so bus subscribers are called there and can emit directly."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from desktop.bus import InboundMessage
from desktop.core import Core
from desktop.tasks import TaskSet


class CoreBridge(QObject):
    """Windows subscribe to `event` and call `send`; none of them touch the bus directly."""

    event = Signal(object)  # type: ignore[assignment]  # any desktop.bus event (QObject.event is a method)

    def __init__(self, core: Core, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self._unsubscribe = core.bus.subscribe(self.event.emit)
        self._pending = TaskSet("the bridge")

    def send(self, session_key: str, text: str, media: list[str] | None = None) -> None:
        """Queue a message for the agent; `session_key` is `channel:chat_id`."""
        channel, _, chat_id = session_key.partition(":")
        message = InboundMessage(channel, chat_id, text, list(media or []))
        self._pending.spawn(self.core.bus.publish_inbound(message))

    def session_title(self, session_key: str) -> str:
        """The chat's title as the sidebar shows it (its key until a title is known)."""
        return self.core.sessions.title_of(session_key)

    def close(self) -> None:
        self._unsubscribe()

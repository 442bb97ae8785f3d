"""What an undo leaves in its chat: a quiet line saying what it put back ("Undid the changes of “tidy up”:
2 files restored, 1 removed"), shown at once and saved with the chat as the app's message, so it is still
there after the chat is reopened or the app restarted (desktop/conversation/transcript.py shows such a
message as a notice). The model reads it too: the files it last saw are no longer as it left them.

While a turn of that chat runs, the line waits for the turn's end: saved mid-turn it could fall between a
tool call and its result, a history the model's provider refuses."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.kernel.bus import OutboundKind, OutboundMessage
from desktop.kernel.host import Host

KIND = "notice"  # the saved message's kind: the app's, not the person's


@dataclass
class UndoNotes:
    host: Host
    _running: set[str] = field(default_factory=set)  # chats whose turn runs
    _waiting: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # chat -> (line, details) to save

    def turn_started(self, chat: str) -> None:
        self._running.add(chat)

    def turn_ended(self, chat: str) -> None:
        self._running.discard(chat)
        waiting = self._waiting.pop(chat, [])
        if waiting:
            self.host.spawn(self._save(chat, waiting))

    async def leave(self, chat: str, line: str, details: str) -> None:
        """Say `line` in the chat (and keep it there); `details` are for the model only."""
        if chat in self._running:
            self._waiting.setdefault(chat, []).append((line, details))
        else:
            await self._save(chat, [(line, details)])

    async def _save(self, chat: str, notes: list[tuple[str, str]]) -> None:
        session = await self.host.sessions.load(chat)
        for line, details in notes:
            await self.host.sessions.append(session, {"role": "user", "kind": KIND,
                                                      "content": f"[{line}]\n{details}"})
            if not session.deleted:
                self.host.publish(OutboundMessage(chat, line, OutboundKind.NOTICE))

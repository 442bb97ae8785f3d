"""Usage where the conversation is: the chat's header says what the chat shown has used ("12.3k tokens · $0.04"),
and hovering one of its answers says what that answer's model calls used, prompt, cached and completion tokens
and cost. A strip with nothing of its own above the composer: it puts its label in the header and answers the
chat window's question about a hovered row.

A chat's calls are read from the usage log off the GUI thread the first time it is shown, then followed as each
is counted, so the header moves as a turn goes and the figures are the same after a restart."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from PySide6.QtWidgets import QLabel, QWidget

from desktop.conversation.transcript import ChatRow, Kind
from desktop.kernel.bus import ChatDeleted, ChatSetAside, Event
from desktop.kernel.taskset import spawn
from desktop.session.session import Session
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.panel import ChatPanel
from desktop.usage import Usage
from desktop.usage.chats import ChatUsage, created_at, read_chat
from desktop.usage.pricing import is_local
from desktop.usage.records import CallRecord
from desktop.usage.report import Totals, brief

STYLE = "#chatUsage { color: palette(placeholder-text); }"


class ChatUsagePanel(ChatPanel):
    def __init__(self, usage: Usage, bridge: CoreBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.usage = usage
        self.bridge = bridge
        self.session_key = ""
        self.label = QLabel()
        self.label.setObjectName("chatUsage")
        self.label.setStyleSheet(STYLE)
        self.label.hide()
        self.chats: dict[str, tuple[Session, ChatUsage]] = {}  # the chats read so far, followed since
        self._reading: dict[str, list[CallRecord]] = {}  # chats being read: the calls counted meanwhile
        self.destroyed.connect(usage.subscribe(self._counted))  # no calls into a deleted panel
        bridge.event.connect(self._on_event)
        self.hide()

    def show_session(self, key: str) -> None:
        self.session_key = key
        self._show()
        if key and key not in self.chats and key not in self._reading:
            spawn(self._read(key))

    def header_widget(self) -> QWidget:
        return self.label

    def row_tip(self, rows: Sequence[ChatRow], index: int) -> str:
        """What an answer's calls used; "" for another row, or an answer with no call counted."""
        read = self.chats.get(self.session_key)
        if read is None or rows[index].kind is not Kind.ASSISTANT:
            return ""
        session, chat = read
        message = saved_message(rows, index, session.messages)
        totals = chat.answer(session.messages, message) if message >= 0 else Totals()
        return self._describe("This answer", totals) if totals.calls else ""

    async def _read(self, key: str) -> None:
        """The chat's calls from the log (flushed first, so none counted before is still on its way to it)."""
        self._reading[key] = []
        try:
            session = await self.bridge.load_chat(key)
            log = self.usage.log
            await log.flush()
            since = created_at(session.metadata)
            records = await asyncio.to_thread(read_chat, log, key, since) if session.messages else []
        finally:
            heard = self._reading.pop(key)
        found = set(records)  # a call counted while the file was read may be in it
        self.chats[key] = (session, ChatUsage([*records, *(r for r in heard if r not in found)]))
        if key == self.session_key:
            self._show()

    def _counted(self, record: CallRecord) -> None:
        record = record._replace(at=round(record.at, 3))  # as the file keeps it: the same call read back is equal
        if record.session in self._reading:
            self._reading[record.session].append(record)
        elif record.session in self.chats:
            self.chats[record.session][1].add(record)
            if record.session == self.session_key:
                self._show()

    def _on_event(self, event: Event) -> None:
        """A chat whose key now holds another conversation (/new) or none (deleted) is read again when shown."""
        if isinstance(event, (ChatSetAside, ChatDeleted)) and event.session_key in self.chats:
            del self.chats[event.session_key]
            if event.session_key == self.session_key:
                self.show_session(event.session_key)

    def _show(self) -> None:
        read = self.chats.get(self.session_key)
        chat = read[1] if read is not None else ChatUsage()
        total = chat.total
        self.label.setVisible(bool(total.calls))
        if not total.calls:
            return
        self.label.setText(brief(total.tokens, total.cost_usd))
        tip = self._describe("This chat", total)
        if len(sources := chat.by_source) > 1:
            tip += "\n" + " · ".join(f"{source.value} {totals.tokens:,}" for source, totals in sources.items())
        self.label.setToolTip(tip)

    def _describe(self, what: str, totals: Totals) -> str:
        calls = f"{totals.calls:,} model call{'s' if totals.calls != 1 else ''}"
        lines = [f"{what}: {calls}", f"{totals.prompt_tokens:,} prompt tokens ({totals.cached_tokens:,} cached)",
                 f"{totals.completion_tokens:,} completion tokens", self._price(totals.cost_usd)]
        if totals.estimated:
            lines.append(f"{totals.estimated:,} estimated: their server reported no usage")
        return "\n".join(lines)

    def _price(self, cost: float | None) -> str:
        if cost is not None:
            return f"${cost:,.4f}"
        return "no price: local model" if is_local(self.bridge.settings.config.api_base) else "no price known"


def saved_message(rows: Sequence[ChatRow], index: int, messages: list[dict[str, Any]]) -> int:
    """The saved message an answer row shows. Rows read from the file know it; rows built live, which follow
    them, are found among the messages saved after those, in order, by their text (a reply of a command or of
    the message tool is no saved answer, and finds none). -1 when not found (an answer still streaming)."""
    row = rows[index]
    if row.message >= 0:
        return row.message
    place = max((r.message for r in rows if r.message >= 0), default=-1) + 1
    for live in rows[:index + 1]:
        if live.message >= 0 or live.kind is not Kind.ASSISTANT:
            continue
        found = next((i for i in range(place, len(messages)) if _shows(messages[i], live.text)), -1)
        if found >= 0:
            place = found + 1
            if live is row:
                return found
    return -1


def _shows(message: dict[str, Any], text: str) -> bool:
    """Whether a saved message is the answer shown as `text` (or the part of it shown before its call failed)."""
    return message.get("role") == "assistant" and text in (message.get("content"), message.get("partial"))

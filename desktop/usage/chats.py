"""One chat's usage: all its calls (its turns, its background tasks, its summaries), and those of each answer.

An answer's calls are the ones counted under the message it answers (`CallRecord.question`, the place of that
message in the chat's saved messages), made after that message was saved: a question asked again in its place
(Retry, Edit) has the same place, and its earlier answer's calls were made before it. A chat's calls are those
made under its key since it was created: /new leaves the key to a fresh conversation, which starts with none."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from desktop.kernel.work import Source
from desktop.usage.records import CallRecord, UsageLog
from desktop.usage.report import Totals


@dataclass
class ChatUsage:
    records: list[CallRecord] = field(default_factory=list)

    def add(self, record: CallRecord) -> None:
        self.records.append(record)

    @property
    def total(self) -> Totals:
        return _sum(self.records)

    @property
    def by_source(self) -> dict[Source, Totals]:
        """The sources it has calls of, in their order."""
        return {source: totals for source in Source
                if (totals := _sum(r for r in self.records if r.source is source)).calls}

    def answer(self, messages: list[dict[str, Any]], index: int) -> Totals:
        """The calls of the answer in saved message `index` (any of its messages: a turn with tool calls saves
        several), summed."""
        question = question_before(messages, index)
        if question < 0:
            return Totals()
        since = saved_at(messages[question])
        return _sum(r for r in self.records if r.question == question and r.at >= since)


def read_chat(log: UsageLog, key: str, since: float) -> list[CallRecord]:
    """The calls made for chat `key` from `since` on. Blocking: call through a thread."""
    return [r for r in log.read_since(since) if r.session == key]


def created_at(metadata: dict[str, Any]) -> float:
    """When the chat (its conversation: /new moves it with its metadata) was first saved; 0 when unknown."""
    return _seconds(metadata.get("created_at"))


def question_before(messages: list[dict[str, Any]], index: int) -> int:
    """The place of the message that saved message `index` answers: the last one to the assistant at or before
    it; -1 for none."""
    return next((i for i in range(min(index, len(messages) - 1), -1, -1) if messages[i].get("role") == "user"), -1)


def saved_at(message: dict[str, Any]) -> float:
    """When a message was saved, to the second it keeps (its calls ended at or after that); 0 when unknown."""
    return _seconds(message.get("timestamp"))


def _seconds(stamp: Any) -> float:
    try:
        return datetime.fromisoformat(stamp).timestamp() if isinstance(stamp, str) else 0.0
    except ValueError:
        return 0.0


def _sum(records: Iterable[CallRecord]) -> Totals:
    totals = Totals()
    for record in records:
        totals.add(record)
    return totals

"""What a chat is told of its background tasks: the report a task brings back (the message its chat's turn takes
in), and what is kept in the chat when the app stopped before that turn told the person (a quit, a crash)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from desktop.session.chat_model import NOTICE


class Ended(Protocol):
    """A task as these lines need it: a task of this run (desktop/subagents/tasks.py) or one a process that died
    left in its ledger (desktop/subagents/ledger.py)."""

    @property
    def label(self) -> str: ...

    @property
    def task(self) -> str: ...

    @property
    def status(self) -> str: ...

    @property
    def result(self) -> str: ...


def report_text(task: Ended) -> str:
    """What the chat that asked receives when the task has ended."""
    what = "finished" if task.status == "done" else "failed"
    return (f"[Background task “{task.label}” {what}]\nTask: {task.task}\n\n"
            f"{'Report' if task.status == 'done' else 'What went wrong'}:\n{task.result}\n\n"
            "Tell the user in a sentence or two what came of it, in plain words (no task ids or internal details).")


def reported_and_answered(messages: list[dict[str, Any]], task: Ended) -> bool:
    """Whether the chat holds the task's report with an answer after it (the turn that took it in ended whole)."""
    report = report_text(task)
    at = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("content") == report), None)
    return at is not None and any(m.get("role") == "assistant" and m.get("content") and not m.get("stopped")
                                  and not m.get("failed") for m in messages[at + 1:])


def report_kept(task: Ended, transcript: Path, stopped: str) -> list[dict[str, Any]]:
    """A report no turn told, saved in its chat after all: a line saying so, then the report as the task wrote it
    (shown as the answer: the model never summed it up), with where its whole run is kept. `stopped`: what
    stopped the app ("the app quit")."""
    what = "finished" if task.status == "done" else "failed"
    line = f"[Background task “{task.label}” {what} as {stopped}, before the assistant could tell you]"
    said = task.result if task.status == "done" else f"What went wrong: {task.result}"
    return [{"role": "user", "kind": NOTICE, "content": f"{line}\nTask: {task.task}"},
            {"role": "assistant", "content": f"{said}\n\n*The report of background task “{task.label}” as it "
             f"wrote it; its whole run is kept in {transcript}*"}]


def stopped_line(task: Ended, began: bool, stopped: str) -> dict[str, Any]:
    """The line kept in a task's chat that the app stopping (`stopped`, "the app quit") stopped the task."""
    line = f"Background task “{task.label}” stopped: {stopped} before it {'finished' if began else 'started'}"
    return {"role": "user", "kind": NOTICE, "content": f"[{line}]\nTask: {task.task}"}

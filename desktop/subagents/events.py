"""What the subagents feature tells the windows: every task's state, published whenever one starts, ends or
moves to another step (the tray and the chat window follow it instead of asking)."""

from __future__ import annotations

from dataclasses import dataclass

from desktop.kernel.bus import Event

TASK_ACTIVE = ("queued", "running")  # a background task in these states has not ended


@dataclass(frozen=True)
class TaskSnapshot:
    """One background task as it was when published: views keep it while the task moves on."""

    id: str
    origin: str  # the session key of the chat that started it
    label: str
    status: str  # queued, running, done, failed, cancelled
    started: float  # time.time() when it was asked for
    step: str = ""  # what it does now while running, e.g. "exec: pytest -q"
    result: str = ""  # its report, or why it failed or stopped, once it has ended
    finished: float | None = None
    tokens: int = 0  # prompt and completion tokens of its model calls so far
    cost_usd: float | None = None  # their known price; None while none of them had one

    @property
    def active(self) -> bool:
        return self.status in TASK_ACTIVE


@dataclass
class BackgroundTasks(Event):
    """Every chat's running, queued and recent background tasks."""

    tasks: list[TaskSnapshot]

    @property
    def running(self) -> list[TaskSnapshot]:
        return [t for t in self.tasks if t.status == "running"]

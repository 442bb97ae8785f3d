"""Subagents: the `spawn` tool, `/tasks`, and stopping a chat's tasks with `/stop`, `/new` and quitting."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from desktop.agent.commands import Command, CommandContext
from desktop.kernel.bus import ChatSetAside, Event
from desktop.subagents.tasks import Subagents, Task
from desktop.subagents.tool import SpawnTool

if TYPE_CHECKING:
    from desktop.core import Core

__all__ = ["Subagents", "Task", "attach_subagents"]


def attach_subagents(core: Core) -> Subagents:
    subagents = Subagents(core)
    core.tools.register(SpawnTool(subagents))
    core.loop.on_stop.append(subagents.cancel_chat)

    def on_event(event: Event) -> None:
        if isinstance(event, ChatSetAside):  # /new: the old conversation's tasks end with it
            subagents.cancel_chat(event.session_key)

    core.bus.subscribe(on_event)

    async def tasks(ctx: CommandContext) -> str:
        return describe(subagents.of(ctx.message.session_key))

    core.loop.commands.add(Command("/tasks", "background tasks of this chat, running and recent", tasks,
                                   immediate=True))
    core.on_close(subagents.close)
    return subagents


def describe(tasks: list[Task]) -> str:
    """/tasks: a Markdown list, running first."""
    if not tasks:
        return "No background tasks in this chat."
    now = time.time()
    lines = []
    for task in sorted(tasks, key=lambda t: (not t.active, -t.started)):
        if task.status == "running":
            state = f"running for {_ago(now - task.started)}" + (f", now: {task.step}" if task.step else "")
        elif task.status == "queued":
            state = "waiting for a free slot"
        else:
            first = task.result.strip().splitlines()[0][:120] if task.result.strip() else ""
            state = f"{task.status} {_ago(now - (task.finished or now))} ago" + (f": {first}" if first else "")
        lines.append(f"- **{task.label}** (`{task.id}`): {state}")
    return "**Background tasks**\n\n" + "\n".join(lines)


def _ago(seconds: float) -> str:
    if seconds < 60:
        return f"{int(seconds)} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{seconds / 3600:.1f} h"

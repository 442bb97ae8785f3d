"""Subagents: the `spawn` tool, `/tasks`, and stopping a chat's tasks with `/stop`, `/new` and quitting."""

from __future__ import annotations

import time

from desktop.agent.commands import Command, CommandContext
from desktop.kernel.bus import ChatSetAside, Event
from desktop.kernel.host import Feature, Host
from desktop.subagents.tasks import Subagents, Task
from desktop.subagents.tool import SpawnTool

__all__ = ["FEATURE", "Subagents", "Task"]


def attach(host: Host) -> Subagents:
    subagents = Subagents(host)
    host.tools.register(SpawnTool(subagents))
    host.hooks.on_stop.append(subagents.cancel_chat)

    def on_event(event: Event) -> None:
        if isinstance(event, ChatSetAside):  # /new: the old conversation's tasks end with it
            subagents.cancel_chat(event.session_key)

    host.subscribe(on_event)

    async def tasks(ctx: CommandContext) -> str:
        return describe(subagents.of(ctx.message.session_key))

    host.commands.add(Command("/tasks", "background tasks of this chat, running and recent", tasks,
                              immediate=True))
    host.on_start(subagents.recover)
    host.on_close(subagents.close)
    host.on_turns_ended(subagents.after_turns)
    return subagents


FEATURE = Feature("subagents", Subagents, attach)


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

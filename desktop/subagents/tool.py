"""The `spawn` tool: the model hands a self-contained task to a background worker and carries on."""

from __future__ import annotations

from typing import Any

from desktop.subagents.tasks import Subagents
from desktop.tools.base import Tool, ToolContext, ToolError


class SpawnTool(Tool):
    name = "spawn"
    in_background = False  # a task does not start more tasks: starting work is its chat's job
    description = ("Start a background task that works on its own (with the file, shell and web tools, without "
                   "this conversation) and reports back here when it is done, so the user need not wait. Use it "
                   "for long, self-contained jobs (research, a batch of file changes); describe the task fully, "
                   "as for someone who has not seen this chat. Returns at once with the task's id.")
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "what to do, complete and self-contained"},
            "label": {"type": "string", "description": "a short name for the task, shown to the user"},
        },
        "required": ["task"],
    }

    def __init__(self, subagents: Subagents) -> None:
        self.subagents = subagents

    async def execute(self, ctx: ToolContext, task: str, label: str = "") -> str:  # type: ignore[override]
        if not task.strip():
            raise ToolError("task is empty: say what the background task should do")
        started = self.subagents.spawn(task.strip(), label.strip(), ctx.session_key)
        if started.status == "queued":
            state = (f"queued: {self.subagents.host.config.max_subagents} tasks already run; it starts when one "
                     "finishes")
        else:
            state = "started"
        return (f"Background task {started.id} (“{started.label}”) {state}. Its report comes back to this chat "
                "as a message when it is done; do not wait for it or check on it.")

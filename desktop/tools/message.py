"""The `message` tool: lets the assistant tell the user something before its turn is over."""

from __future__ import annotations

from desktop.kernel.bus import OutboundKind, OutboundMessage
from desktop.tools.base import Tool, ToolContext, ToolOutput


class MessageTool(Tool):
    name = "message"
    in_background = False  # background work reports to its chat through the task's result, not mid-way
    description = ("Send a message to the user right away, while you keep working (progress, a question, a "
                   "result). Your final answer is delivered anyway; do not repeat it with this tool.")
    parameters = {
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1, "description": "The message text (Markdown)."},
            "session_key": {"type": "string", "minLength": 1,
                            "description": "Conversation to send to (default: the current one)."},
        },
        "required": ["content"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, content: str,  # type: ignore[override]
                      session_key: str | None = None) -> ToolOutput:
        ctx.publish(OutboundMessage(session_key or ctx.session_key, content, OutboundKind.MESSAGE))
        return "Message sent."

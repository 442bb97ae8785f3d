"""One turn's ReAct loop: call the model, run the tools it asks for, repeat until it answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from desktop.kernel.bus import (
    MessageTakenIn,
    Publish,
    ReasoningDelta,
    Retrying,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from desktop.providers.llm import LLMProvider, LLMResponse, ProviderError
from desktop.tools.base import ToolContext, ToolError, ToolOutput, cap_text
from desktop.tools.registry import ToolRegistry, parse_arguments

MODEL_RESULT_CAP = 16_000
INTERRUPTED = "Interrupted: the user stopped this turn before the tool finished."
LIMIT_NOTE = ("You have used every tool step allowed for this turn. Without calling tools, tell the user "
              "briefly what was done and what remains.")

LOCAL_KEYS = ("ok", "stopped", "seconds", "label", "summary", "kind")  # kept for the chat, never sent to the model
Record = Callable[[dict[str, Any]], Awaitable[None]]
# messages sent into the running turn, each as its chat keeps it and as the model reads it (its files read in)
Injected = Callable[[], Awaitable[list[tuple[dict[str, Any], dict[str, Any]]]]]


async def _none_injected() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return []


@dataclass
class TurnResult:
    content: str


class Runner:
    def __init__(self, provider: LLMProvider, tools: ToolRegistry, publish: Publish, max_iterations: int,
                 model: str | None = None) -> None:
        self.provider = provider
        self.model = model  # the chat's own model; None: the default in config.yaml
        self.tools = tools
        self.publish = publish  # where progress events go: the bus for chats, nowhere for Dream
        self.max_iterations = max_iterations
        self.partial: list[str] = []  # the answer text streamed so far in the model call under way

    @property
    def cut_off_text(self) -> str:
        """What the person saw of an answer whose call failed midway (the caller keeps it, marked cut off)."""
        return "".join(self.partial)

    async def run(self, messages: list[dict[str, Any]], ctx: ToolContext, record: Record,
                  take_injected: Injected = _none_injected) -> TurnResult:
        """Run until a final answer. `record` persists each new message the moment it is complete;
        on cancellation (/stop) the partial answer and 'interrupted' tool results are recorded too."""
        key = ctx.session_key
        partial = self.partial
        open_calls: list[dict[str, Any]] = []
        try:
            for _step in range(self.max_iterations):
                partial.clear()

                def on_text(piece: str) -> None:
                    partial.append(piece)
                    self.publish(TextDelta(key, piece))

                response = await self.provider.chat(
                    messages, self.tools.schemas() or None, on_text=on_text, model=self.model,
                    on_reasoning=lambda s: self.publish(ReasoningDelta(key, s)),
                    on_retry=lambda attempt, attempts, wait: self.publish(Retrying(key, attempt, attempts, wait)))
                if not response.tool_calls:
                    await self._add(messages, record, assistant_message(response))
                    return TurnResult(response.content)
                assistant = assistant_message(response)
                open_calls = list(assistant["tool_calls"])
                await self._add(messages, record, assistant)
                while open_calls:
                    call = open_calls[0]
                    result = await self._run_tool(call, ctx)
                    open_calls.pop(0)
                    await self._add(messages, record, result)
                for kept, sent in await take_injected():
                    messages.append(sent)
                    await record(kept)
                    self.publish(MessageTakenIn(key, kept))
            return TurnResult(await self._limit_summary(messages, record, key))
        except asyncio.CancelledError:
            if open_calls:
                for call in open_calls:  # marked so a reload shows them failed and the turn stopped, as live
                    await record({**tool_message(call, INTERRUPTED), "ok": False, "stopped": True})
            elif partial:
                await record({"role": "assistant", "content": "".join(partial), "stopped": True})
            raise

    async def _run_tool(self, call: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        fn = call["function"]
        tool = self.tools.get(fn["name"])
        label = tool.label if tool is not None else ""
        arguments = _loose_args(fn["arguments"])
        summary = tool.described(arguments) if tool is not None else ""
        self.publish(ToolStarted(ctx.session_key, call["id"], fn["name"], arguments, label, summary))
        outcome = await self.tools.run(fn["name"], fn["arguments"], replace(ctx, call_id=call["id"]))
        text = output_text(outcome.output)
        self.publish(ToolFinished(ctx.session_key, call["id"], fn["name"], text, outcome.ok, outcome.seconds))
        message = tool_message(call, outcome.output if isinstance(outcome.output, list)
                               else cap_text(text, MODEL_RESULT_CAP))
        message["ok"] = outcome.ok
        if outcome.seconds is not None:  # kept for the chat after a reload, to the millisecond the chat shows
            message["seconds"] = round(outcome.seconds, 3)
        if label:
            message["label"] = label
        if summary:
            message["summary"] = summary
        return message

    async def _limit_summary(self, messages: list[dict[str, Any]], record: Record, key: str) -> str:
        try:
            response = await self.provider.chat(
                [*messages, {"role": "user", "content": LIMIT_NOTE}], model=self.model,
                on_text=lambda s: self.publish(TextDelta(key, s)))
            content = response.content
        except ProviderError:
            content = ""
        if not content:
            content = (f"I stopped after {self.max_iterations} tool steps, the most allowed for one turn, "
                       "before finishing. Ask me to continue if you want me to go on.")
        await self._add(messages, record, {"role": "assistant", "content": content})
        return content

    @staticmethod
    async def _add(messages: list[dict[str, Any]], record: Record, message: dict[str, Any]) -> None:
        messages.append({k: v for k, v in message.items() if k not in LOCAL_KEYS})
        await record(message)


def assistant_message(response: LLMResponse) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": response.content or None}
    if response.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in response.tool_calls]
    if response.reasoning:
        message["reasoning_content"] = response.reasoning
    return message


def tool_message(call: dict[str, Any], content: ToolOutput) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call["id"], "name": call["function"]["name"], "content": content}


def output_text(output: ToolOutput) -> str:
    if isinstance(output, str):
        return output
    return "\n".join(p.get("text", f"[{p.get('type', 'content')}]") for p in output)


def _loose_args(raw: str) -> dict[str, Any]:
    """Arguments for display: parsed when possible, raw text otherwise."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"_raw": raw}

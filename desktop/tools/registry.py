"""Tools by name; turns every kind of bad call into a tool error the model can recover from, and every output
into text that can be saved and sent (desktop/kernel/wellformed.py)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from desktop.kernel.wellformed import well_formed, well_formed_json
from desktop.tools.base import Tool, ToolContext, ToolError, ToolOutput, validate

log = logging.getLogger(__name__)

ERROR_HINT = "\n\n[Analyse the error above and try a different approach.]"


@dataclass
class ToolOutcome:
    output: ToolOutput
    ok: bool
    seconds: float | None = None  # how long the tool ran, from when the gate let it through; None: it never ran


# Runs before every call with the validated arguments; raises ToolError to stop it (desktop/approvals).
Gate = Callable[[Tool, dict[str, Any], ToolContext], Awaitable[None]]


class ToolRegistry:
    def __init__(self, tools: list[Tool] | None = None, gate: Gate | None = None) -> None:
        self.gate = gate
        self._tools: dict[str, Tool] = {}
        for tool in tools or []:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._current().get(name)

    @property
    def names(self) -> list[str]:
        return list(self._current())

    def for_background(self) -> ToolRegistry:
        """A live view of the tools background work may use (`Tool.in_background`): tools registered here
        later, such as those of an MCP server that connects or refreshes, and the gate show in it too."""
        return _Background(self)

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self._current().values() if tool.available]

    async def run(self, name: str, raw_arguments: str | dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        tools = self._current()
        tool = tools.get(name)
        gate = self._gate()
        started: float | None = None
        output: ToolOutput
        try:
            if tool is None:
                raise ToolError(f"unknown tool '{name}'. Available tools: {', '.join(tools)}")
            arguments = parse_arguments(raw_arguments)
            checked = validate(tool.parameters, arguments)
            if gate is not None:
                await gate(tool, checked, ctx)
            started = time.monotonic()  # a question waiting for the person's answer is not the tool's time
            output, ok = await tool.execute(ctx, **checked), True
        except ToolError as exc:
            output, ok = f"Error: {exc}{ERROR_HINT}", False
        except Exception as exc:  # a bug in a tool is still only a tool error
            log.exception("tool %s crashed", name)
            output, ok = f"Error: {name} failed: {type(exc).__name__}: {exc}{ERROR_HINT}", False
        return ToolOutcome(_mended(output), ok, None if started is None else time.monotonic() - started)

    def _current(self) -> dict[str, Tool]:
        return self._tools

    def _gate(self) -> Gate | None:
        return self.gate


class _Background(ToolRegistry):
    """What `for_background` returns: reads its source at every use. Register tools on the source, not here."""

    def __init__(self, source: ToolRegistry) -> None:
        super().__init__()
        self._source = source

    def _current(self) -> dict[str, Tool]:
        return {n: t for n, t in self._source._current().items() if t.in_background}

    def _gate(self) -> Gate | None:
        return self._source._gate()


def _mended(output: ToolOutput) -> ToolOutput:
    """A file name that is not UTF-8 (a sandboxed command can make one) or a bad escape from an MCP server
    would otherwise keep the chat from being saved and every later call from being sent."""
    if isinstance(output, str):
        return well_formed(output)
    return [{**part, "text": well_formed(part["text"])} if isinstance(part.get("text"), str) else part
            for part in output]


def parse_arguments(raw: str | dict[str, Any]) -> dict[str, Any]:
    """The call's arguments as a dict. Their strings are mended too: a `\\udcff` escape in the model's JSON is a
    lone surrogate once parsed, which a file or a command line cannot take."""
    if isinstance(raw, dict):
        return raw
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolError(f"arguments are not valid JSON ({exc.msg} at position {exc.pos}): {raw[:200]!r}") from None
    except RecursionError:  # what a model writes is outside text: it must not end the turn
        raise ToolError(f"arguments are nested too deeply to read: {raw[:200]!r}") from None
    if not isinstance(value, dict):
        raise ToolError(f"arguments must be a JSON object, got {type(value).__name__}")
    return dict(well_formed_json(value))

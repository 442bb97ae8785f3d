"""The tool contract and argument validation (cast where safe, reject what does not fit)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.kernel.bus import Event, MessageKind

if TYPE_CHECKING:
    from desktop.config import Config

# What a tool returns: text, or OpenAI-style content parts (e.g. an image for read_file).
ToolOutput = str | list[dict[str, Any]]


class ToolError(Exception):
    """A failure the model should read and react to (bad path, refused command...)."""


@dataclass
class ToolContext:
    """Who is calling: lets tools address the current session and publish to the user."""

    session_key: str
    publish: Callable[[Event], None] = field(default=lambda event: None)
    call_id: str = ""  # the tool call being run, for progress events about it
    kind: MessageKind = MessageKind.USER  # what started the turn: approvals hold app-started ones to Do not disturb


class Tool(ABC):
    name: str
    description: str
    parameters: dict[str, Any]
    # Offered to the model now. A tool whose backend is down stays callable (it explains why it failed)
    # but is not offered, so the model does not plan with it.
    available: bool = True
    label: str = ""  # how the chat names its calls when its name alone does not say it (MCP: "server · tool")
    # Its policy, declared here so approvals and background work apply it without naming tools:
    in_background: bool = True  # background work may call it; False for tools that talk to the person or start work
    approval_title: str = ""  # the question on the approval card; empty: "Let the assistant use <name>?"

    @abstractmethod
    async def execute(self, ctx: ToolContext, **args: Any) -> ToolOutput:
        """Run with validated arguments; raise ToolError for failures the model should see."""

    async def needs_approval(self, config: Config, arguments: dict[str, Any]) -> str | None:
        """Why this call needs the person's yes (what the sandbox and the path guard cannot contain), or None
        when it may run. `approvals.tools` in config.yaml overrides it either way."""
        return None

    def shown(self, arguments: dict[str, Any]) -> str:
        """What the person approves, and what an "Always allow" rule matches exactly: the path, else the
        arguments in short."""
        if "path" in arguments:
            return str(arguments["path"])
        return ", ".join(f"{k}={v!r:.80}" for k, v in arguments.items())

    def described(self, arguments: dict[str, Any]) -> str:
        """The call in a few words for the chat's card, where no one argument says it (a reminder: its name and
        when it runs, not the action); "" lets the chat show the argument that says most. Never raises: the
        arguments are as the model wrote them."""
        return ""

    async def change(self, arguments: dict[str, Any]) -> str:
        """The change the call would make, as a unified diff for the approval card; "" when it shows none."""
        return ""

    def trust(self) -> tuple[str, Callable[[Config], None]] | None:
        """What "Always allow" saves when it is broader than this exact call here: in words, and as an edit of
        the settings (an MCP tool trusts its server). None: a rule for exactly this call in this workspace."""
        return None

    def grant(self) -> str:
        """What a grant decided ahead for unattended work names to let this tool run without asking
        (desktop/approvals/ahead.py): the tool's name, or broader (an MCP tool: `mcp:SERVER`, all its server's)."""
        return self.name

    def schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


def validate(schema: dict[str, Any], value: Any, where: str = "arguments") -> Any:
    """Return `value` cast to the schema ("3" -> 3 for an integer) or raise ToolError saying what is wrong."""
    expected = schema.get("type")
    value = _cast(expected, value)
    if expected and not _is_type(expected, value):
        raise ToolError(f"{where} should be {expected}, got {type(value).__name__} {value!r:.80}")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{where} must be one of {schema['enum']}, got {value!r:.80}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolError(f"{where} must be >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolError(f"{where} must be <= {schema['maximum']}")
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        raise ToolError(f"{where} must not be empty" if schema["minLength"] == 1
                        else f"{where} must be at least {schema['minLength']} characters")
    if isinstance(value, list) and "items" in schema:
        value = [validate(schema["items"], item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict) and expected == "object":
        value = _validate_object(schema, value, where)
    return value


def _validate_object(schema: dict[str, Any], value: dict[str, Any], where: str) -> dict[str, Any]:
    props: dict[str, Any] = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if k not in value]
    if missing:
        raise ToolError(f"{where}: missing required {', '.join(missing)}")
    extra = [k for k in value if k not in props]
    if extra and schema.get("additionalProperties", False) is False:
        raise ToolError(f"{where}: unexpected {', '.join(extra)} (allowed: {', '.join(props) or 'none'})")
    prefix = "" if where == "arguments" else f"{where}."
    return {k: validate(props[k], v, f"{prefix}{k}") if k in props else v for k, v in value.items()}


def _cast(expected: str | None, value: Any) -> Any:
    if not isinstance(value, str):
        if expected == "number" and isinstance(value, int) and not isinstance(value, bool):
            return value
        if expected == "string" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value
    text = value.strip()
    try:
        if expected == "integer" and text.lstrip("-").isdigit():
            return int(text)
        if expected == "number":
            return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return value
    if expected == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _is_type(expected: str | list[str], value: Any) -> bool:
    names = expected if isinstance(expected, list) else [expected]
    return any(_TYPES.get(n, lambda v: True)(value) for n in names)


def cap_text(text: str, limit: int) -> str:
    """Keep the head and tail of long text, saying how much was cut from the middle."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n\n... [{len(text) - limit} characters omitted] ...\n\n{text[-tail:]}"


def display_path(path: Path, workspace: Path) -> str:
    try:
        return str(path.relative_to(workspace))
    except ValueError:
        return str(path)

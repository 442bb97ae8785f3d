"""MCP servers' prompts as slash commands: `/SERVER:PROMPT key=value …` asks the server for the prompt and sends
its messages to the model as the person's turn (the chat shows what they typed). A prompt is a command while
its server is connected, so `/help` and the chat's `/` completion list exactly what can be used now."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from desktop.agent.commands import Command, CommandContext, Commands, Handler, UserTurn
from desktop.mcp.manager import McpServers
from desktop.mcp.results import block_text
from desktop.tools.base import ToolError

if TYPE_CHECKING:
    from mcp.types import GetPromptResult, Prompt

SUMMARY_LENGTH = 160  # a server's description, shown beside the command in completion and /help


class ArgumentsError(ValueError):
    """The typed arguments do not fit the prompt; the message says what it takes."""


class PromptCommands:
    """Keeps the command table in step with the connected servers' prompts."""

    def __init__(self, servers: McpServers, commands: Commands) -> None:
        self._servers = servers
        self._commands = commands
        self._added: list[str] = []

    def sync(self) -> None:
        """Called on every server change: the commands of prompts that went away go, new ones come."""
        for added in self._added:
            self._commands.remove(added)
        self._added = []
        for conn in self._servers.servers.values():
            if conn.state != "connected":
                continue
            for prompt in conn.prompts:
                name = command_name(conn.name, prompt.name)
                if name is not None:
                    self._commands.add(Command(name, summary(prompt), self._handler(conn.name, prompt.name)))
                    self._added.append(name)

    def _handler(self, server: str, prompt: str) -> Handler:
        async def run(ctx: CommandContext) -> str | UserTurn:
            return await self.expand(server, prompt, ctx.args)
        return run

    async def expand(self, server: str, prompt_name: str, typed: str) -> str | UserTurn:
        """The prompt with the typed arguments, as the person's turn; or why not, as the command's reply."""
        conn = self._servers.servers.get(server)
        prompt = next((p for p in conn.prompts if p.name == prompt_name), None) if conn is not None else None
        if conn is None or prompt is None or conn.state != "connected":
            state = conn.describe() if conn is not None else "no longer configured"
            return f"MCP server '{server}' does not offer the prompt {prompt_name} now ({state})."
        try:
            result = await conn.get_prompt(prompt.name, parse_arguments(typed, server, prompt))
        except (ArgumentsError, ToolError) as exc:
            return str(exc)
        text = prompt_text(result)
        if not text:
            return f"The prompt {prompt_name} of MCP server '{server}' came back empty: nothing was sent."
        return UserTurn(text)


def command_name(server: str, prompt: str) -> str | None:
    """`/SERVER:PROMPT`, or None for a name that cannot be typed as one word."""
    name = f"/{server}:{prompt}"
    return None if not server or not prompt or any(c.isspace() for c in name) else name


def summary(prompt: Prompt) -> str:
    """Its description's first line and its arguments, optional ones in brackets."""
    first = (prompt.description or "").strip().splitlines()
    described = first[0][:SUMMARY_LENGTH] if first else "an MCP prompt"
    arguments = [a.name if a.required else f"[{a.name}]" for a in prompt.arguments or []]
    return f"{described} — arguments: {', '.join(arguments)}" if arguments else described


def parse_arguments(typed: str, server: str, prompt: Prompt) -> dict[str, str]:
    """`key=value` for the prompt's own argument names, the other words in the order of those not named yet;
    quotes keep spaces in a value (shell rules). Raises ArgumentsError saying what the prompt takes."""
    declared = prompt.arguments or []
    names = [a.name for a in declared]
    usage = " ".join([f"/{server}:{prompt.name}",
                      *(f"{a.name}=…" if a.required else f"[{a.name}=…]" for a in declared)])
    try:
        words = shlex.split(typed)
    except ValueError as exc:
        raise ArgumentsError(f"Could not read the arguments ({exc}). Use: {usage}") from None
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in names:
            named[key] = value
        else:
            positional.append(word)
    free = [name for name in names if name not in named]
    if len(positional) > len(free):
        extra = ", ".join(repr(word) for word in positional[len(free):])
        raise ArgumentsError(f"Too many arguments for {prompt.name}: {extra} left over. Use: {usage}")
    named.update(zip(free, positional, strict=False))
    missing = [a for a in declared if a.required and not named.get(a.name)]
    if missing:
        listed = ", ".join(a.name + (f" ({a.description})" if a.description else "") for a in missing)
        raise ArgumentsError(f"The prompt {prompt.name} needs {listed}. Use: {usage}")
    return named


def prompt_text(result: GetPromptResult) -> str:
    """The prompt's messages as one text; when it scripts both sides, each says whose it is."""
    both = len({message.role for message in result.messages}) > 1
    parts = [(f"{message.role.capitalize()}: " if both else "") + block_text(message.content)
             for message in result.messages]
    return "\n\n".join(part for part in parts if part.strip())

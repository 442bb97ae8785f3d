"""Slash commands: handled by the loop itself, never sent to the model."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from desktop.kernel.bus import ChatSetAside, InboundMessage
from desktop.providers import catalog
from desktop.session.chat_model import chat_model, choose_model, chosen_model, note_model
from desktop.session.session import Session

if TYPE_CHECKING:
    from desktop.agent.loop import AgentLoop

log = logging.getLogger(__name__)


@dataclass
class CommandContext:
    loop: AgentLoop
    session: Session
    message: InboundMessage

    @property
    def args(self) -> str:
        parts = self.message.content.strip().split(maxsplit=1)
        return parts[1] if len(parts) > 1 else ""


@dataclass(frozen=True)
class UserTurn:
    """What a command that stands for a message (an MCP server's prompt) sends to the model as the person's
    turn; the chat shows what they typed."""

    content: str


Handler = Callable[[CommandContext], Awaitable[str | UserTurn]]
STOP = "/stop"  # handled by the loop itself (`AgentLoop.stop`): it must not wait behind the turn it stops


@dataclass
class Command:
    name: str
    summary: str
    handler: Handler
    immediate: bool = False  # answered at once even while the session's turn runs
    interrupts: bool = False  # replaces the session's running turn instead of waiting for it (/new)


class Commands:
    """The table of slash commands; features (memory, subagents) add their own with `add`, MCP servers' prompts
    come and go with `remove`. Names are matched without regard to case."""

    def __init__(self) -> None:
        self._table: dict[str, Command] = {}
        self.add(Command("/new", "start a new conversation (the old one stays in the chat list)", _new,
                         interrupts=True))
        self.add(Command(STOP, "stop the running turn (the partial answer is kept)", _never_called))
        self.add(Command("/help", "list the commands", _help, immediate=True))
        self.add(Command("/status", "model, context use and running tasks", _status, immediate=True))
        self.add(Command("/model", "show or switch this chat's model: /model NAME", _model))

    def add(self, command: Command) -> None:
        self._table[command.name.lower()] = command

    def remove(self, name: str) -> None:
        self._table.pop(name.lower(), None)

    @property
    def immediate(self) -> set[str]:
        return {name for name, c in self._table.items() if c.immediate}

    @property
    def interrupting(self) -> set[str]:
        return {name for name, c in self._table.items() if c.interrupts}

    def all(self) -> list[Command]:
        return list(self._table.values())

    def name_of(self, content: str) -> str | None:
        word = content.strip().split(maxsplit=1)[0].lower() if content.strip() else ""
        return word if word in self._table else None

    async def run(self, name: str, ctx: CommandContext) -> str | UserTurn:
        """The command's reply. One that fails (a file of the app's it needs is damaged) says so as its reply:
        its exception used to end the turn without one, and the chat waited for an answer that never came."""
        try:
            return await self._table[name].handler(ctx)
        except Exception as exc:
            log.exception("the command %s failed", name)
            return f"{name} could not finish: {exc}"


async def _never_called(ctx: CommandContext) -> str:
    raise AssertionError(f"{STOP} is handled by the loop's dispatcher")


async def _new(ctx: CommandContext) -> str:
    """Like the New chat button: the conversation is kept as a chat of its own, this one starts empty."""
    session = ctx.session
    if not session.messages:
        return "Started a new conversation."
    old = await ctx.loop.sessions.set_aside(session)
    ctx.loop.bus.publish(ChatSetAside(old))
    for hook in ctx.loop.hooks.on_set_aside:
        await hook(session)
    return f"Started a new conversation. The previous one is kept in the chat list as “{session.title}”."


async def _help(ctx: CommandContext) -> str:
    """A Markdown list: the chat renders it as one, a terminal shows it as readable text."""
    lines = [f"- `{c.name}` — {c.summary}" for c in ctx.loop.commands.all()]
    return "**Commands**\n\n" + "\n".join(lines)


async def _status(ctx: CommandContext) -> str:
    loop = ctx.loop
    config = loop.config
    history = ctx.session.history()
    estimate = loop.estimate_tokens(history)
    share = f" ({estimate / config.context_window_tokens:.0%})" if config.context_window_tokens > 0 else ""
    running = [f"“{loop.sessions.title_of(key)}”" for key in loop.busy_sessions]
    return ("**Status**\n\n"
            f"- **Model:** {chat_model(ctx.session, config.model) or '(not configured)'}\n"
            f"- **Context:** at most about {estimate:,} of {config.context_window_tokens:,} tokens{share}, "
            f"{len(history)} message{'s' if len(history) != 1 else ''} since the last consolidation\n"
            f"- **Running:** {', '.join(running) if running else 'nothing'}")


async def _model(ctx: CommandContext) -> str:
    """This chat's model: shown, or switched for this chat alone (kept with the chat)."""
    name = ctx.args.strip()
    default = ctx.loop.config.model
    if not name:
        current = chat_model(ctx.session, default)
        whose = "" if chosen_model(ctx.session) else " (the default, set in Settings)"
        return f"Model for this chat: {current or '(not configured)'}{whose}"
    # a server at api_base names its models as it likes (and gets them as written); elsewhere litellm must
    # tell the provider from the name, or the next turn fails in its words
    if not ctx.loop.config.api_base and not await catalog.names_provider(name):
        return (f"The model name '{name}' names no provider the app knows; give provider/model, such as "
                f"openai/gpt-4o-mini or ollama/llama3. This chat still uses "
                f"{chat_model(ctx.session, default) or '(no model configured)'}.")
    await choose_model(ctx.loop.sessions, ctx.session, name)
    await note_model(ctx.loop.sessions, ctx.session, name)  # the exchange itself is not saved: this line is
    return f"This chat now uses {name} (other chats keep theirs; new chats start with {default or 'the default'})."

"""The agent loop: drains the inbound queue and runs turns (serial per session, bounded overall)."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from desktop.agent import attachments
from desktop.agent.commands import STOP, CommandContext, Commands, UserTurn
from desktop.agent.context import ContextBuilder
from desktop.agent.gate import TurnGate
from desktop.agent.hooks import TurnHooks
from desktop.agent.runner import Runner, output_text
from desktop.kernel import work
from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.bus import (
    InboundMessage,
    MessageBus,
    MessageKind,
    OutboundKind,
    OutboundMessage,
    TurnError,
    TurnFinished,
    TurnStarted,
)
from desktop.kernel.taskset import TaskSet
from desktop.providers.llm import LLMProvider, ProviderError
from desktop.providers.token_bound import messages_bound
from desktop.session import titles
from desktop.session.chat_model import chosen_model
from desktop.session.session import ChatNotSaved, Session, SessionStore
from desktop.settings import Settings
from desktop.tools.base import ToolContext
from desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

HISTORY_PREVIEW = 500
FAILED_PLACEHOLDER = "(No reply: the model request failed.)"


@dataclass
class _SessionState:
    pending: deque[InboundMessage] = field(default_factory=deque)
    injected: list[InboundMessage] = field(default_factory=list)
    worker: asyncio.Future[None] | None = None
    turn: asyncio.Task[None] | None = None
    unsaved: InboundMessage | None = None  # the message whose turn starts, until that turn has saved it


class AgentLoop:
    """All decisions about inbound messages pass through `dispatch`, called from one `while` in `run`."""

    def __init__(self, settings: Settings, bus: MessageBus, provider: LLMProvider, tools: ToolRegistry,
                 sessions: SessionStore, context: ContextBuilder, tool_outputs_dir: Path) -> None:
        self.settings = settings
        self.config = settings.config
        self.bus = bus
        self.provider = provider
        self.tools = tools
        self.sessions = sessions
        self.context = context
        self.tool_outputs_dir = tool_outputs_dir
        self.commands = Commands()
        self.hooks = TurnHooks()  # where features hook into turns (desktop/agent/hooks.py)
        self._states: dict[str, _SessionState] = {}
        self._gate = TurnGate(self.config.max_concurrent_turns)
        settings.subscribe("max_concurrent_turns", lambda _: self._gate.resize(self.config.max_concurrent_turns))
        self._background = TaskSet("the agent loop")
        self._closing = False  # shutting down: messages still waiting are kept, not taken up by new turns

    async def run(self) -> None:
        while True:
            self.dispatch(await self.bus.inbound.get())

    def dispatch(self, msg: InboundMessage) -> None:
        key = msg.session_key
        state = self._states.setdefault(key, _SessionState())
        name = msg.command = msg.command or self.commands.name_of(msg.content)  # parsed once, here
        if name == STOP:
            _settle([msg], self._stop(key, state))
            return
        if name in self.commands.interrupting and state.turn is not None:
            state.turn.cancel()  # a new conversation replaces the running one
        if name in self.commands.immediate:
            self.spawn(self._command(msg, name))
        elif state.turn is not None and not name:
            state.injected.append(msg)  # the running turn picks it up after its next tool step
        else:
            state.pending.append(msg)
            if state.worker is None:
                state.worker = self.spawn(self._drain(key, state))

    def waiting_for_user(self, session_key: str) -> AbstractAsyncContextManager[None]:
        """Around a wait for the user (an approval): the turn gives up its place meanwhile."""
        return self._gate.released(session_key)

    @property
    def busy_sessions(self) -> list[str]:
        return [k for k, s in self._states.items() if s.turn is not None]

    def estimate_tokens(self, history: list[dict[str, Any]]) -> int:
        system = {"role": "system", "content": self.context.system_prompt()}
        return messages_bound([system, *history])

    async def ask(self, session_key: str, text: str, *, kind: MessageKind = MessageKind.USER,
                  media: list[str] | None = None, title: str = "") -> TurnFinished | TurnError:
        """Submit a message to a session and wait for the end of the turn that answers it: the one way
        code (the CLI, scheduled jobs, subagents, tests) asks the agent something. A message for a chat
        whose turn is running joins that turn, so its end is that turn's end. Cancelled by shutdown."""
        return await self._submit(InboundMessage(session_key, text, list(media or []), kind, title=title))

    async def stop(self, session_key: str) -> TurnFinished | TurnError:
        """Stop the chat: the messages waiting in it, its running turn (the partial answer is kept) and its other
        work (the `on_stop` hooks: its background tasks), in order with what was sent to it before. Returns what
        the stop is answered with ("Nothing is running." when nothing was); the turn it stopped ends as usual."""
        return await self._submit(InboundMessage(session_key, "", command=STOP))

    async def _submit(self, msg: InboundMessage) -> TurnFinished | TurnError:
        msg.reply = asyncio.get_running_loop().create_future()
        await self.bus.publish_inbound(msg)
        return await msg.reply

    def spawn(self, coro: Awaitable[Any]) -> asyncio.Future[Any]:
        """Start background work that `shutdown` cancels."""
        return self._background.spawn(coro)

    async def shutdown(self, grace: float = 2.0) -> None:
        """Let running turns finish saving for a moment (no new one starts), then cancel the rest."""
        self._closing = True
        turns = [s.turn for s in self._states.values() if s.turn is not None]
        if turns:
            await asyncio.wait(turns, timeout=grace)
        await self._background.cancel_all(grace)
        for state in self._states.values():
            left = [m for m in (state.unsaved, *state.pending, *state.injected) if m is not None]
            for msg in left:
                if msg.reply is not None:
                    msg.reply.cancel()  # nobody will answer it in this run
            for msg in left:
                await self._keep_unanswered(msg, grace)

    async def _keep_unanswered(self, msg: InboundMessage, within: float) -> None:
        """Quitting: a message the person sent that no turn took up (it waited behind the running turn, or for a
        free turn) is saved in its chat unanswered, as a turn stopped before any answer leaves its question: it was
        sent, so it stays. The app's own messages are their features' to keep (a reminder runs again at the next
        start)."""
        if msg.kind is not MessageKind.USER or msg.command or msg.redo or not (msg.content.strip() or msg.media):
            return
        try:
            async with asyncio.timeout(within):
                await self._save_question(await self.sessions.load(msg.session_key), msg, msg.content)
        except Exception as exc:  # whatever this one hit, quitting goes on
            log.warning("a message sent to %s as the app quit could not be kept: %s", msg.session_key, exc)

    def _stop(self, key: str, state: _SessionState) -> TurnFinished:
        for dropped in state.pending:
            _settle([dropped], TurnFinished(key, "", stopped=True))
        state.pending.clear()
        background = sum(stop(key) for stop in self.hooks.on_stop)
        if state.turn is not None:
            state.turn.cancel()
            return TurnFinished(key, "Stopped.", stopped=True)
        note = f"Stopped {background} background task{'s' if background != 1 else ''}." if background \
            else "Nothing is running."
        self.bus.publish(OutboundMessage(key, note, OutboundKind.COMMAND))
        return TurnFinished(key, note)

    async def _drain(self, key: str, state: _SessionState) -> None:
        try:
            while state.pending and not self._closing:
                msg = state.unsaved = state.pending.popleft()
                async with self._gate.slot(key):
                    state.turn = asyncio.ensure_future(self._turn(msg, state))
                    try:
                        await state.turn
                    except asyncio.CancelledError:
                        current = asyncio.current_task()
                        if current is not None and current.cancelling():
                            raise
                    except Exception as exc:  # before the turn's own handling: its chat file could not be read
                        log.exception("turn could not start in %s", key)
                        self._end([msg], TurnError(key, f"The message could not be taken up: {exc}"))
                    finally:
                        state.turn = None
                        current = asyncio.current_task()
                        if current is None or not current.cancelling():  # quitting: `shutdown` keeps it
                            state.unsaved = None
                        leftovers, state.injected = state.injected, []
                        state.pending.extendleft(reversed(leftovers))
        finally:
            state.worker = None

    async def _command(self, msg: InboundMessage, name: str) -> UserTurn | None:
        session = await self.sessions.load(msg.session_key)
        reply = await self.commands.run(name, CommandContext(self, session, msg))
        if isinstance(reply, UserTurn):
            return reply  # the command stands for a message: the turn goes on with it
        key = msg.session_key  # not session.key: /new moves that session to another key
        state = self._states.get(key)
        end = TurnFinished(key, reply)
        if state is not None and state.turn is not None and name in self.commands.immediate:
            self.bus.publish(OutboundMessage(key, reply, OutboundKind.COMMAND))  # must not end the turn
        else:
            self.bus.publish(end)
        _settle([msg], end)
        return None

    async def _turn(self, msg: InboundMessage, state: _SessionState) -> None:
        text = msg.content
        if msg.command:
            expanded = await self._command(msg, msg.command)
            if expanded is None:
                return  # answered by the command itself
            text = expanded.content  # sent as the person's message; what they typed is shown
        session = await self.sessions.load(msg.session_key)
        key = session.key
        work.begin(work.of_turn(key, msg.kind))  # the turn's model calls are counted as its source's
        answered = [msg]  # this message and those injected into the turn: all settled by its end

        async def record(message: dict[str, Any]) -> None:
            await self.sessions.append(session, await self._for_history(key, message))

        async def take_injected() -> list[tuple[dict[str, Any], dict[str, Any]]]:
            """The messages sent into this turn with their files, as its chat keeps them and as the model reads
            them (desktop.agent.attachments)."""
            taken, state.injected = state.injected, []
            answered.extend(taken)
            return [await attachments.joined(m, self.context.workspace, key) for m in taken]

        asked = False  # the message is saved: what follows it in the chat is this turn's
        self.bus.publish(TurnStarted(key, msg.kind, msg.content, redo=msg.redo))
        try:  # from here every way out ends the turn with an event: a started turn never stays open
            attached, replaced = await self._save_question(session, msg, text)
            asked = True
            state.unsaved = None
            ctx = ToolContext(key, self.bus.publish, kind=msg.kind)
            runner = Runner(self.provider, self.tools, self.bus.publish, self.config.max_iterations,
                            chosen_model(session))
            for hook in self.hooks.before_turn:
                await hook(session)
            history = session.history()[:-1]  # everything before this turn's message
            messages = await asyncio.to_thread(self.context.build_messages, history, attached.content, key,
                                               media=attached.images)
            result = await runner.run(messages, ctx, record, take_injected)
        except asyncio.CancelledError:
            self._end(answered, TurnFinished(key, _last_partial(session) if asked else "", stopped=True))
            raise
        except ProviderError as exc:  # the reason is kept, so a reload still says what went wrong
            failed = {"role": "assistant", "content": FAILED_PLACEHOLDER, "failed": True, "error": str(exc),
                      "error_kind": exc.kind.value}
            # what the person read before it broke off, in this try or the one it retries: shown again, never sent
            partial = runner.cut_off_text or next((m["partial"] for m in replaced if m.get("partial")), "")
            if partial:
                failed["partial"] = partial
            reason = str(exc)
            try:
                await self.sessions.append(session, failed)
            except ChatNotSaved as unsaved:  # the model's reason still ends the turn, with the file's
                reason = f"{reason}\n{unsaved}"
            self._end(answered, TurnError(key, reason, exc.kind.value))
            return
        except Exception as exc:  # a bug must end the turn visibly, not hang the session
            log.exception("turn failed in %s", key)
            self._end(answered, TurnError(key, f"Internal error: {type(exc).__name__}: {exc}"))
            return
        self._end(answered, TurnFinished(key, result.content))
        for hook in self.hooks.after_turn:
            self.spawn(hook(session))

    async def _save_question(self, session: Session, msg: InboundMessage,
                             text: str) -> tuple[attachments.Prepared, list[dict[str, Any]]]:
        """The turn's message, with its attachments read, saved before the model is called; and what a retry
        replaced (the failed answer it takes the place of)."""
        attached = await attachments.read(msg, text, self.context.workspace, session.key)
        user = attachments.question(msg, attached)
        titled = titles.entitle(session.metadata, msg)  # before the first write: the metadata line carries it
        written = "created_at" in session.metadata  # the metadata line is already on disk
        replaced = await self.sessions.drop_last_turn(session, msg.content) if msg.redo else []
        await self.sessions.append(session, user)
        if titled and written:
            await self.sessions.rewrite(session)  # rare: a chat that began with a notice or a command
        return attached, replaced

    def _end(self, answered: list[InboundMessage], end: TurnFinished | TurnError) -> None:
        self.bus.publish(end)
        _settle(answered, end)

    async def _for_history(self, key: str, message: dict[str, Any]) -> dict[str, Any]:
        """Tool results keep a short preview in history; the full text goes to a file it points to."""
        if message.get("role") != "tool":
            return message
        text = output_text(message["content"])
        if len(text) <= HISTORY_PREVIEW and isinstance(message["content"], str):
            return message
        path = self.tool_outputs_dir / quote(key, safe="") / f"{quote(message['tool_call_id'], safe='')}.txt"
        await asyncio.to_thread(atomic_write_text, path, text)
        preview = (f"{text[:HISTORY_PREVIEW]}\n... [{len(text)} characters in all; "
                   f"full output saved at {path}]")
        return {**message, "content": preview, "full_output": str(path)}


def _settle(messages: list[InboundMessage], end: TurnFinished | TurnError) -> None:
    for msg in messages:
        if msg.reply is not None and not msg.reply.done():
            msg.reply.set_result(end)


def _last_partial(session: Session) -> str:
    last = session.messages[-1] if session.messages else {}
    return str(last.get("content") or "") if last.get("role") == "assistant" else ""

"""Checkpoints: every turn's and background task's file changes are written down (desktop/checkpoints/service.py
says how), and `/undo` reverts the chat's last turn that changed files."""

from __future__ import annotations

from typing import Any

from desktop.agent.commands import Command, CommandContext
from desktop.approvals import Approvals
from desktop.checkpoints.service import ANYWAY, ASK, REST, Actor, Checkpoints
from desktop.checkpoints.settings import SECTION
from desktop.kernel.bus import ChatDeleted, ChatSetAside, Event, TurnError, TurnFinished, TurnStarted
from desktop.kernel.host import Feature, Host
from desktop.scheduler import Scheduler
from desktop.session.session import Session
from desktop.subagents.events import BackgroundTasks
from desktop.tools.base import Tool, ToolContext

__all__ = ["FEATURE", "Checkpoints"]
LABEL_LENGTH = 60
UNDO_CHOICES = {"": ASK, "rest": REST, "anyway": ANYWAY}  # /undo, /undo rest, /undo anyway
TIDY_EVERY = 24 * 3600.0  # seconds between retention runs while the app stays open (it also runs at start)


def attach(host: Host) -> Checkpoints:
    checkpoints = Checkpoints(host)
    turns: dict[str, Actor] = {}  # chat -> its running turn
    tasks: dict[str, Actor] = {}  # background task id -> it
    set_aside_from: list[str] = []  # /new: the chat's old key, until the hook hears its new one

    async def before_turn(session: Session) -> None:
        index = len(session.messages) - 1  # the turn's own message is saved before the hooks run
        turns[session.key] = checkpoints.begin(session.key, index, _label(session.messages[index]))

    async def after_set_aside(session: Session) -> None:
        if set_aside_from:
            await checkpoints.move_chat(set_aside_from.pop(), session.key)

    def on_event(event: Event) -> None:
        if isinstance(event, TurnStarted):  # said before its message is saved: an undo from now on waits
            checkpoints.notes.turn_started(event.session_key)
        elif isinstance(event, (TurnFinished, TurnError)):
            if event.session_key in turns:
                checkpoints.end(turns.pop(event.session_key))
            checkpoints.notes.turn_ended(event.session_key)
        elif isinstance(event, ChatSetAside):
            set_aside_from.append(event.session_key)
        elif isinstance(event, ChatDeleted):
            host.spawn(checkpoints.tidy())
        elif isinstance(event, BackgroundTasks):
            for task in event.tasks:
                if task.status == "running" and task.id not in tasks:
                    tasks[task.id] = checkpoints.begin(task.origin, -1, f"{task.label} (background task)")
                elif task.status != "running" and task.id in tasks:
                    checkpoints.end(tasks.pop(task.id))

    earlier_gate = host.tools.gate

    async def gate(tool: Tool, arguments: dict[str, Any], ctx: ToolContext) -> None:
        if earlier_gate is not None:
            await earlier_gate(tool, arguments, ctx)
        await checkpoints.settled()  # the look at the turn's start comes before anything the tool changes

    async def undo(ctx: CommandContext) -> str:
        choice = UNDO_CHOICES.get(ctx.args.strip().lower())
        if choice is None:
            return "`/undo` undoes this chat's last turn that changed files; `/undo rest` and `/undo anyway` say " \
                   "what to do with files changed since it (the reply to `/undo` names them)."
        return (await checkpoints.undo(ctx.message.session_key, choice=choice)).message

    async def first_look() -> None:
        checkpoints.request_look()  # the first ever copies the workspace once: in the background
        host.spawn(checkpoints.tidy())

    host.tools.gate = gate
    host.hooks.before_turn.append(before_turn)
    host.hooks.on_set_aside.append(after_set_aside)
    host.subscribe(on_event)
    host.commands.add(Command("/undo", "undo the file changes of this chat's last turn that changed files "
                                       "(again: the one before); /undo rest leaves files changed since as they "
                                       "are, /undo anyway overwrites them (keeping a copy)", undo))
    host.on_start(first_look)
    host.on_close(checkpoints.close)
    host.settings.subscribe(("checkpoints", "workspace"), lambda _: checkpoints.resume())
    host.get(Scheduler).add_system_job("checkpoints-retention", lambda: TIDY_EVERY, checkpoints.tidy)
    return checkpoints


FEATURE = Feature("checkpoints", Checkpoints, attach, requires=(Approvals, Scheduler),
                  settings=SECTION)  # its tool gate wraps approvals'


def _label(message: dict[str, Any]) -> str:
    text = message.get("typed") or message.get("content") or ""
    if isinstance(text, list):
        text = " ".join(str(part.get("text", "")) for part in text if isinstance(part, dict))
    line = str(text).strip().splitlines()[0] if str(text).strip() else "a turn"
    return line[:LABEL_LENGTH] + ("…" if len(line) > LABEL_LENGTH else "")

"""The heartbeat: every `schedules.heartbeat_interval` seconds (0: off) the model looks at the active tasks
in the workspace's HEARTBEAT.md, and the user hears of it only when something needs them.

Cheap when idle: without task lines there is no model call at all. It runs in its own chat that keeps
only the last few exchanges (a heartbeat chat that grows forever costs more tokens every half hour), and
it is a system job, so it waits while a turn runs.

HEARTBEAT.md lives in the workspace, which sandboxed commands write, and the heartbeat reads it by itself:
through desktop.workspace.access, so a HEARTBEAT.md that became a link out of the workspace, a pipe or a huge
file is not read; the user is told once (a notice) and the beat does nothing."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from desktop.heartbeat.tasks import QUIET_MARKER, active_tasks, is_quiet
from desktop.kernel.bus import Ask, MessageKind, TurnError
from desktop.kernel.channels import Channel, session_key
from desktop.kernel.host import Feature, Host
from desktop.kernel.notices import Notify, at_newest, plain_text
from desktop.scheduler import Scheduler
from desktop.scheduler.settings import SchedulesConfig
from desktop.session.session import SessionStore
from desktop.workspace import access
from desktop.workspace.layout import TEXT_FILE_LIMIT

log = logging.getLogger(__name__)
JOB_NAME = "heartbeat"
SESSION = session_key(Channel.SYSTEM, "heartbeat")
TITLE = "Heartbeat"
FILE = "HEARTBEAT.md"
KEEP_EXCHANGES = 3  # earlier heartbeat exchanges are dropped before each run
MIN_INTERVAL = 60  # seconds


@dataclass(frozen=True)
class Beat:
    """One heartbeat: the tasks it found and, when it asked the model, the answer (or why it failed)."""

    tasks: list[str]
    answer: str = ""
    error: str = ""

    @property
    def quiet(self) -> bool:
        return not self.tasks or (not self.error and is_quiet(self.answer))


def heartbeat_interval(configured: int) -> int:
    """0 turns it off; anything else is at least a minute."""
    return 0 if configured <= 0 else max(MIN_INTERVAL, configured)


def prompt(tasks: list[str]) -> str:
    lines = "\n".join(f"- {task}" for task in tasks)
    return (f"[Heartbeat: a periodic check of the active tasks in {FILE}, not a message from the user]\n"
            f"{lines}\n\nWork on these now with your tools as far as they say. If nothing needs the user's "
            f"attention, answer with exactly {QUIET_MARKER} and nothing else. Otherwise answer in a sentence "
            "or two with what the user should know; that answer is shown to them as a notification.")


class Heartbeat:
    def __init__(self, workspace: Path, sessions: SessionStore, ask: Ask, notify: Notify) -> None:
        self.workspace = workspace
        self._sessions = sessions
        self._ask = ask
        self._notify = notify
        self._lock = asyncio.Lock()  # the timer and `nanobot-tray heartbeat` never overlap
        self._refused = ""  # why HEARTBEAT.md was last refused, so the user hears of it once

    async def run(self) -> Beat:
        """One heartbeat now."""
        async with self._lock:
            text, refused = await asyncio.to_thread(access.load_text, self.workspace, FILE, TEXT_FILE_LIMIT)
            if refused:
                if refused != self._refused:  # once, not every half hour
                    self._notify(TITLE, f"{refused}. The heartbeat does nothing until it is a plain file again.")
                self._refused = refused
                return Beat([], error=refused)
            self._refused = ""
            tasks = active_tasks(text)
            if not tasks:
                return Beat([])
            await self._keep_recent()
            end = await self._ask(SESSION, prompt(tasks), kind=MessageKind.SCHEDULED)
            beat = Beat(tasks, error=end.message) if isinstance(end, TurnError) else Beat(tasks, end.content)
            if beat.error:
                log.warning("heartbeat failed: %s", beat.error)
            elif not beat.quiet:
                answered = await self._sessions.load(SESSION)  # cached: the turn just saved its answer there
                self._notify(TITLE, plain_text(beat.answer), at_newest(answered))
            return beat

    async def _keep_recent(self) -> None:
        """Drop all but the last KEEP_EXCHANGES - 1 exchanges, so with this one there are KEEP_EXCHANGES."""
        session = await self._sessions.load(SESSION)
        changed = session.metadata.get("title") != TITLE
        session.metadata["title"] = TITLE  # a new file gets it with its first message
        starts = [i for i, m in enumerate(session.messages) if m.get("role") == "user"]
        if len(starts) >= KEEP_EXCHANGES:
            del session.messages[:starts[-(KEEP_EXCHANGES - 1)]]
            session.metadata["last_consolidated"] = 0
            changed = True
        if changed and session.messages:
            await self._sessions.rewrite(session)


def attach(host: Host) -> Heartbeat:
    """The heartbeat on the scheduler, following the workspace setting."""
    heartbeat = Heartbeat(host.workspace, host.sessions, host.ask_agent, host.notify)
    host.get(Scheduler).add_system_job(
        JOB_NAME, lambda: heartbeat_interval(host.config.section(SchedulesConfig).heartbeat_interval), heartbeat.run)
    host.settings.subscribe("workspace", lambda _: setattr(heartbeat, "workspace", host.workspace))
    return heartbeat


FEATURE = Feature("heartbeat", Heartbeat, attach, requires=(Scheduler,), cli="desktop.cli.heartbeat_cmd")

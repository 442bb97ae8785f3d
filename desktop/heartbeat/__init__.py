"""The heartbeat: every `schedules.heartbeat_interval` seconds (0: off) the model looks at the active tasks
in the workspace's HEARTBEAT.md, and the user hears of it only when something needs them.

Cheap when idle: without task lines there is no model call at all. It runs in its own chat that keeps
only the last few exchanges (a heartbeat chat that grows forever costs more tokens every half hour), and
it is a system job, so it waits while a turn runs.

HEARTBEAT.md lives in the workspace, which sandboxed commands write, and the heartbeat reads it by itself:
through desktop.workspace.access, so a HEARTBEAT.md that became a link out of the workspace, a pipe or a huge
file is not read; the user is told once (a notice) and the beat does nothing.

Nobody is there to answer a question during a beat: the tools it may use where they would ask are granted
ahead in `schedules.heartbeat_allow`; a call that would ask fails at once, and the notice names what it wanted
with an action to allow it and beat again."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from desktop.approvals import Approvals
from desktop.approvals.ahead import Grant, UnattendedRuns
from desktop.config import Config
from desktop.heartbeat.tasks import QUIET_MARKER, active_tasks, is_quiet
from desktop.kernel.bus import Ask, MessageKind, TurnError
from desktop.kernel.channels import Channel, session_key
from desktop.kernel.host import Feature, Host
from desktop.kernel.notices import Notice, OpenChat, at_newest, plain_text
from desktop.kernel.taskset import TaskSet
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
SAVE_WITHIN = 3.0  # seconds quitting waits for a grant's save (the core gives each feature 5)


@dataclass(frozen=True)
class Beat:
    """One heartbeat: the tasks it found and, when it asked the model, the answer (or why it failed)."""

    tasks: list[str]
    answer: str = ""
    error: str = ""
    wanted: list[str] = field(default_factory=list)  # what it would have asked to use: no grant for it

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


def wanted_text(wanted: list[str]) -> str:
    """What a beat lacked, in words for its notice and the command line."""
    return (f"It wanted to use {', '.join(wanted)} without asking, which the heartbeat may not (allow it in "
            "Settings → General, “Heartbeat may use without asking”, or schedules.heartbeat_allow).")


class Heartbeat:
    def __init__(self, workspace: Path, sessions: SessionStore, ask: Ask, tell: Callable[[Notice], None],
                 unattended: UnattendedRuns, allowed: Callable[[], list[str]],
                 allow: Callable[[list[str]], Awaitable[None]]) -> None:
        """`tell` publishes a notice; `allowed()` is what a beat may use without asking, `allow(names)` adds
        to it (the notice's "Allow and run again")."""
        self.workspace = workspace
        self._sessions = sessions
        self._ask = ask
        self._tell = tell
        self._unattended = unattended
        self._allowed = allowed
        self._allow = allow
        self._lock = asyncio.Lock()  # the timer and `nanobot-tray heartbeat` never overlap
        self._refused = ""  # why HEARTBEAT.md was last refused, so the user hears of it once
        self._runs = TaskSet("heartbeat")  # beats asked for by "Allow and run again": cut short by quitting
        self._saves = TaskSet("heartbeat's grants")  # never cancelled: quitting waits for them (SAVE_WITHIN)

    async def close(self) -> None:
        """Quitting: a beat asked for is cut short, a grant's save begun is waited for."""
        await self._runs.cancel_all(grace=1.0)
        await self._saves.settle(SAVE_WITHIN)

    async def run(self) -> Beat:
        """One heartbeat now."""
        async with self._lock:
            text, refused = await asyncio.to_thread(access.load_text, self.workspace, FILE, TEXT_FILE_LIMIT)
            if refused:
                if refused != self._refused:  # once, not every half hour
                    self._tell(Notice(TITLE, f"{refused}. The heartbeat does nothing until it is a plain file "
                                      "again."))
                self._refused = refused
                return Beat([], error=refused)
            self._refused = ""
            tasks = active_tasks(text)
            if not tasks:
                return Beat([])
            await self._keep_recent()
            grants: dict[str, Grant] = dict.fromkeys(self._allowed(), "allow")
            how = "they can allow it in Settings for the heartbeat (schedules.heartbeat_allow)"
            with self._unattended.running(SESSION, grants, how) as run:
                end = await self._ask(SESSION, prompt(tasks), kind=MessageKind.SCHEDULED)
            beat = (Beat(tasks, error=end.message, wanted=run.wanted) if isinstance(end, TurnError)
                    else Beat(tasks, end.content, wanted=run.wanted))
            if beat.error:
                log.warning("heartbeat failed: %s", beat.error)
            if beat.wanted:
                self._tell_wanted(beat)
            elif not beat.error and not beat.quiet:
                answered = await self._sessions.load(SESSION)  # cached: the turn just saved its answer there
                self._tell(Notice(TITLE, plain_text(beat.answer), at_newest(answered)))
            return beat

    def _tell_wanted(self, beat: Beat) -> None:
        """A beat that lacked a grant says so, even when it found nothing to report, with the way to allow it."""
        said = beat.error or ("" if beat.quiet else plain_text(beat.answer))
        wanted = list(beat.wanted)

        def again(_action: str) -> None:
            saved = self._saves.spawn(self._allow(wanted))

            async def beat_once_saved() -> None:
                await asyncio.shield(saved)  # a quit cancels the beat, never the save
                await self.run()

            self._runs.spawn(beat_once_saved())

        self._tell(Notice(TITLE, f"{said}\n{wanted_text(wanted)}".strip(), OpenChat(SESSION),
                          (("again", "Allow and run again"),), again))

    async def _keep_recent(self) -> None:
        """Drop the heartbeat's own exchanges but the last KEEP_EXCHANGES - 1, so with this one there are
        KEEP_EXCHANGES. One the person began (a question typed in this chat, under a beat's answer) is theirs and
        stays: it was deleted with the beats around it, unarchived."""
        session = await self._sessions.load(SESSION)
        changed = session.metadata.get("title") != TITLE
        session.metadata["title"] = TITLE  # a new file gets it with its first message
        messages = session.messages
        starts = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        beats = [i for i in starts if messages[i].get("kind") == MessageKind.SCHEDULED.value]
        if len(beats) >= KEEP_EXCHANGES:
            cut = beats[-(KEEP_EXCHANGES - 1)]
            ends = dict(zip(starts, [*starts[1:], len(messages)], strict=True))
            theirs = [i for start in starts if start < cut and start not in beats for i in range(start, ends[start])]
            messages[:cut] = [messages[i] for i in theirs]
            session.metadata["last_consolidated"] = 0
            changed = True
        if changed and session.messages:
            await self._sessions.rewrite(session)


def attach(host: Host) -> Heartbeat:
    """The heartbeat on the scheduler, following the workspace setting."""
    def allowed() -> list[str]:
        return list(host.config.section(SchedulesConfig).heartbeat_allow)

    async def allow(names: list[str]) -> None:
        def add(config: Config) -> None:
            kept = config.section(SchedulesConfig).heartbeat_allow
            kept.extend(name for name in names if name not in kept)

        await host.settings.update(add)

    heartbeat = Heartbeat(host.workspace, host.sessions, host.ask_agent, host.publish,
                          host.get(Approvals).unattended, allowed, allow)
    host.get(Scheduler).add_system_job(
        JOB_NAME, lambda: heartbeat_interval(host.config.section(SchedulesConfig).heartbeat_interval), heartbeat.run)
    host.settings.subscribe("workspace", lambda _: setattr(heartbeat, "workspace", host.workspace))
    host.on_close(heartbeat.close)
    return heartbeat


FEATURE = Feature("heartbeat", Heartbeat, attach, requires=(Scheduler, Approvals), cli="desktop.cli.heartbeat_cmd")

"""Background tasks (subagents): each runs the agent's own runner on one task, with its own tools and no
conversation, a few at a time, and reports back to the chat that started it. Qt-free."""

from __future__ import annotations

import asyncio
import functools
import logging
import platform
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from desktop.agent.context import runtime_block
from desktop.agent.runner import Runner
from desktop.kernel import work
from desktop.kernel.atomic import append_jsonl
from desktop.kernel.bus import Event, MessageKind, ToolFinished, ToolStarted, TurnError, TurnFinished
from desktop.kernel.channels import Channel, session_key
from desktop.kernel.host import Host
from desktop.kernel.taskset import TaskSet
from desktop.providers.llm import ProviderError
from desktop.subagents import ledger
from desktop.subagents.events import TASK_ACTIVE, BackgroundTasks, TaskSnapshot
from desktop.subagents.lines import report_kept, report_text, reported_and_answered, stopped_line
from desktop.tools.base import ToolContext
from desktop.workspace.layout import prompt_text

log = logging.getLogger(__name__)

RECENT_KEPT = 10  # finished tasks /tasks still lists, per chat
LEDGER_WITHIN = 3.0  # seconds quitting waits for the ledger's last write (the core gives each step 5)
QUIT = "the app quit"
CRASH = "the app closed"  # a crash, a power cut: what the next start finds
STEP_CHARS = 80


@dataclass(eq=False)
class Task:
    id: str
    label: str
    task: str
    origin: str  # the session key of the chat that started it
    status: str = "queued"  # queued, running, done, failed, cancelled
    step: str = ""  # the tool it runs now, with what it runs it on
    result: str = ""  # its report, or why it failed
    started: float = field(default_factory=time.time)
    finished: float | None = None
    run: work.Work | None = None  # its work once started: the meter counts its calls' tokens and cost there
    worker: asyncio.Future[Any] | None = field(default=None, repr=False)
    # The origin chat's turn that told the user about it (None when cancelled or nothing could be told).
    told: asyncio.Future[TurnFinished | TurnError | None] | None = field(default=None, repr=False)

    @property
    def active(self) -> bool:
        return self.status in TASK_ACTIVE

    def snapshot(self) -> TaskSnapshot:
        tokens, cost = (self.run.tokens, self.run.cost_usd) if self.run is not None else (0, None)
        return TaskSnapshot(self.id, self.origin, self.label, self.status, self.started, self.step, self.result,
                            self.finished, tokens, cost)


class Subagents:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.directory = host.home.data_dir / "subagents"
        self.tasks: dict[str, Task] = {}
        self._queue: deque[Task] = deque()
        self._closing = False
        self._stopped: list[tuple[Task, bool]] = []  # tasks quitting stopped, each with whether it had begun
        self._untold: list[Task] = []  # tasks that had ended when quitting began, their reports not yet told
        # Tasks whose chats have not been told what became of them, by id, as the ledger on disk keeps them.
        self._open: dict[str, dict[str, str]] = {}
        self._ledger = ledger.ledger_of(self.directory)
        self._ledger_lock = asyncio.Lock()
        self._ledger_writes = TaskSet("the background tasks' ledger")  # never cancelled: quitting waits for them

    def transcript(self, task_id: str) -> Path:
        """Its whole run, one message a line (the task first, the outcome last)."""
        return self.directory / f"{task_id}.jsonl"

    def spawn(self, task: str, label: str, origin: str) -> Task:
        """Start (or queue) a task for the chat `origin`; the same task asked again while it is still active
        is that one (a model repeating its call does not start a duplicate)."""
        same = next((t for t in self.tasks.values() if t.active and t.origin == origin and t.task == task), None)
        if same is not None:
            return same
        made = Task(uuid.uuid4().hex[:6], label or _label_of(task), task, origin)
        made.told = asyncio.get_running_loop().create_future()
        self.tasks[made.id] = made
        self._open[made.id] = {"id": made.id, "label": made.label, "task": made.task, "origin": origin}
        self._save_ledger()
        self._queue.append(made)
        self._forget_old(origin)
        self._pump()
        return made

    def of(self, origin: str) -> list[Task]:
        return [t for t in self.tasks.values() if t.origin == origin]

    def snapshots(self) -> list[TaskSnapshot]:
        """Every running, queued and recent task as it is now (what the last BackgroundTasks said)."""
        return [t.snapshot() for t in self.tasks.values()]

    @property
    def running(self) -> list[Task]:
        return [t for t in self.tasks.values() if t.status == "running"]

    def cancel_chat(self, origin: str) -> int:
        """Stop the chat's active tasks (/stop, /new); returns how many."""
        active = [t for t in self.of(origin) if t.active]
        for task in active:
            self.cancel(task)
        return len(active)

    def cancel(self, task: Task) -> None:
        if task.status == "queued":
            self._queue.remove(task)
            self._end(task, "cancelled", "Cancelled before it started.")
        elif task.worker is not None:
            task.worker.cancel()

    async def close(self) -> None:
        """Quitting: cancel every task and wait until each has stopped (its commands killed). Their chats hear of
        it in `after_turns`, once no turn writes those chats any more."""
        self._closing = True  # nothing queued starts while the others stop
        self._untold = [t for t in self.tasks.values() if t.status in ("done", "failed")
                        and (t.told is None or not t.told.done())]
        active = [t for t in self.tasks.values() if t.active]
        begun = {t.id for t in active if t.status == "running"}
        workers = [t.worker for t in active if t.worker is not None]
        for task in active:
            self.cancel(task)
        if workers:
            await asyncio.gather(*workers, return_exceptions=True)
        self._stopped = [(task, task.id in begun) for task in active]

    async def after_turns(self) -> None:
        """Quitting, once every turn has ended: say in each chat what became of its tasks, or after a restart the
        person waits for results that never come. A task quitting stopped gets a line saying so; one that ended
        but whose report no turn took in (it waited behind a running turn, or the turn telling it was cut short)
        gets its report as it wrote it, which was otherwise kept only in its transcript."""
        for task, begun in self._stopped:
            if await self._keep(task.origin, [stopped_line(task, begun, QUIT)]):
                self._settle(task)
        for task in self._untold:
            if await self._told(task) or await self._keep(task.origin,
                                                          report_kept(task, self.transcript(task.id), QUIT)):
                self._settle(task)
        await self._ledger_writes.settle(LEDGER_WITHIN)

    async def recover(self) -> None:
        """At start: what a run of the app that died (a crash, a power cut) left unsaid about its tasks, said in
        their chats as a quit would have said it."""
        for path, tasks in await asyncio.to_thread(ledger.left_behind, self.directory):
            for left in tasks:
                if left.status in ("done", "failed"):
                    if not reported_and_answered((await self.host.sessions.load(left.origin)).messages, left):
                        await self._keep(left.origin, report_kept(left, self.transcript(left.id), CRASH))
                else:  # cut off (no end in its transcript), or cancelled by a quit that could not say so
                    await self._keep(left.origin, [stopped_line(left, left.began, CRASH)])
            try:
                await asyncio.to_thread(ledger.write, path, [])
            except OSError as exc:
                log.warning("could not remove the background tasks' ledger %s: %s", path, exc)

    async def _told(self, task: Task) -> bool:
        """Whether the chat got the task's report and an answer to it while the app quit: the turn that took it in
        ended whole, or its chat shows the report with an answer after it."""
        end = task.told.result() if task.told is not None and task.told.done() else None
        if isinstance(end, TurnError) or (isinstance(end, TurnFinished) and not end.stopped):
            return True
        return reported_and_answered((await self.host.sessions.load(task.origin)).messages, task)

    async def _keep(self, origin: str, messages: list[dict[str, Any]]) -> bool:
        """Save `messages` in the chat `origin`; False when they could not be (logged)."""
        try:
            session = await self.host.sessions.load(origin)
            for message in messages:
                await self.host.sessions.append(session, message)
        except OSError as exc:
            log.warning("could not tell chat %s what became of a background task: %s", origin, exc)
            return False
        return True

    def _settle(self, task: Task) -> None:
        """The task's chat knows what became of it: out of the ledger."""
        if self._open.pop(task.id, None) is not None:
            self._save_ledger()

    def _save_ledger(self) -> None:
        self._ledger_writes.spawn(self._write_ledger(list(self._open.values())))  # as it is now: writes keep order

    async def _write_ledger(self, entries: list[dict[str, str]]) -> None:
        async with self._ledger_lock:
            try:
                await asyncio.to_thread(ledger.write, self._ledger, entries)
            except OSError as exc:
                log.warning("could not keep the background tasks' ledger %s: %s", self._ledger, exc)

    # ----- running
    def _pump(self) -> None:
        limit = max(1, self.host.config.max_subagents)
        while self._queue and len(self.running) < limit and not self._closing:
            task = self._queue.popleft()
            task.status = "running"
            task.worker = self.host.spawn(self._run(task))
            task.worker.add_done_callback(functools.partial(self._cancelled_early, task))
        self._publish()

    def _publish(self) -> None:
        self.host.publish(BackgroundTasks(self.snapshots()))

    def _cancelled_early(self, task: Task, worker: asyncio.Future[Any]) -> None:
        """A task cancelled before its worker ran a line never reached its own `except`: end it here."""
        if worker.cancelled() and task.active:
            self._end(task, "cancelled", "Cancelled.")

    async def _run(self, task: Task) -> None:
        try:
            report = await self._work(task)
        except asyncio.CancelledError:
            self._end(task, "cancelled", "Cancelled.")
            raise
        except ProviderError as exc:
            self._end(task, "failed", f"the model could not be reached: {exc}")
        except Exception as exc:  # a bug must still end the task and say so
            log.exception("background task %s failed", task.id)
            self._end(task, "failed", f"{type(exc).__name__}: {exc}")
        else:
            self._end(task, "done", report)
        await self._tell(task)

    async def _work(self, task: Task) -> str:
        path = self.transcript(task.id)
        await asyncio.to_thread(append_jsonl, path, [{"_type": "task", "id": task.id, "label": task.label,
                                                      "task": task.task, "origin": task.origin}])

        async def record(message: dict[str, Any]) -> None:
            await asyncio.to_thread(append_jsonl, path, [message])

        def publish(event: Event) -> None:
            self.host.publish(event)  # with its own session key, subagent:<id>: no chat shows it as its own
            if isinstance(event, (ToolStarted, ToolFinished)) and task.active:
                task.step = _step_of(event) if isinstance(event, ToolStarted) else ""
                self._publish()

        key = session_key(Channel.SUBAGENT, task.id)
        task.run = work.Work(work.Source.SUBAGENT, task.origin)  # its calls count for its chat, as a task's
        work.begin(task.run)
        ctx = ToolContext(key, publish)
        tools = self.host.tools.for_background()  # no tool that talks to the person or starts work
        runner = Runner(self.host.provider, tools, publish, self.host.config.subagent_max_iterations)
        messages = [{"role": "system", "content": await asyncio.to_thread(self._system_prompt, tools.names)},
                    {"role": "user", "content": f"{runtime_block(key)}\n\n{task.task}"}]
        result = await runner.run(messages, ctx, record)
        return result.content

    def _system_prompt(self, tools: list[str]) -> str:
        workspace = self.host.workspace
        runtime = f"{platform.system()} {platform.release()}, Python {sys.version.split()[0]}"
        parts = [Template(prompt_text("subagent.md", workspace)).safe_substitute(
            workspace=str(workspace), runtime=runtime).strip()]
        skills = self.host.context.skills
        if skills is not None:
            parts.extend(skills.prompt_sections(tools))
        return "\n\n---\n\n".join(parts)

    def _end(self, task: Task, status: str, result: str) -> None:
        task.status, task.result, task.finished, task.step = status, result, time.time(), ""
        self.host.spawn(self._write_end(task))
        if status == "cancelled" and task.told is not None and not task.told.done():
            task.told.set_result(None)
        if status == "cancelled" and not self._closing:  # stopped by the person, in the chat: nothing more to say
            self._settle(task)
        self._pump()

    async def _write_end(self, task: Task) -> None:
        record = {"_type": "end", "status": task.status, "result": task.result}
        try:
            await asyncio.to_thread(append_jsonl, self.transcript(task.id), [record])
        except OSError as exc:
            log.warning("could not finish the transcript of background task %s: %s", task.id, exc)

    async def _tell(self, task: Task) -> None:
        """The result goes to the chat that asked, as a message of its own kind: it joins that chat's running
        turn, or starts one whose answer the user sees there (and is notified of when it is not on screen)."""
        text = report_text(task)
        end: TurnFinished | TurnError | None = None
        try:
            end = await self.host.ask_agent(task.origin, text, kind=MessageKind.SUBAGENT_RESULT,
                                            title=f"Background task: {task.label}")  # if the chat has none yet
        finally:
            if task.told is not None and not task.told.done():
                task.told.set_result(end)
            if not self._closing:  # told (or stopped there by the person); quitting settles it in `after_turns`
                self._settle(task)

    def _forget_old(self, origin: str) -> None:
        finished = [t for t in self.of(origin) if not t.active]
        for task in finished[:-RECENT_KEPT]:
            del self.tasks[task.id]


def _step_of(event: ToolStarted) -> str:
    """The tool and the first thing it was given (the command, the path, the query), on one line."""
    first = next((v for v in event.arguments.values() if isinstance(v, str) and v.strip()), "")
    text = f"{event.name}: {' '.join(first.split())}" if first else event.name
    return text[:STEP_CHARS] + ("…" if len(text) > STEP_CHARS else "")


def _label_of(task: str) -> str:
    line = task.strip().splitlines()[0] if task.strip() else "task"
    return line[:40] + ("…" if len(line) > 40 else "")

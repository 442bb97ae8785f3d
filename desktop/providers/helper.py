"""The app's side of the model helper: the process that holds litellm (desktop/providers/helper_main.py).

Every model call goes through it, from the app and from the command line alike: one way to make a call. It is
started when someone shows intent (a window of the app taking the focus, `agent -m` starting: `warm`) or by the
first call, and closed after `provider.model_idle_exit` without calls, so the app at rest holds none of
litellm's memory.

One helper serves the whole process. Its socket is read on the model thread's loop (model_thread.py), which
outlives any one caller's loop; callers on other loops reach it through `ask`."""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from desktop.providers import HELPER_FLAG, wire
from desktop.providers.model_thread import in_model_thread, model_loop, run_on_model_thread, to_caller

log = logging.getLogger(__name__)

EXIT_WAIT = 5.0  # seconds a closed helper gets to exit before it is killed
EventSink = Callable[[dict[str, Any]], None]


class HelperGone(RuntimeError):
    """The helper exited (or could not start) before it answered; the message says how, for the person."""


class HelperFailed(RuntimeError):
    """An operation raised in the helper: a bug there, not a failed model call (ops report those as results)."""


def helper_command(fd: int) -> list[str]:
    """How to start a helper serving socket `fd`: the frozen program is its own interpreter. `-P` keeps the
    working directory off the import path (it is "/" anyway: never the workspace, whose files a sandboxed
    command may have written)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, HELPER_FLAG, str(fd)]
    return [sys.executable, "-P", "-m", "desktop", HELPER_FLAG, str(fd)]


@dataclass
class _Call:
    answer: asyncio.Future[Any]
    on_event: EventSink | None


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    writer: asyncio.StreamWriter
    calls: dict[int, _Call] = field(default_factory=dict)
    environment: dict[str, str] = field(default_factory=dict)  # as last sent


class ModelHelper:
    """At most one helper process at a time, started on demand and closed when idle. Used on the model thread's
    loop only (see `ask`)."""

    def __init__(self) -> None:
        self.idle_exit = 120.0  # seconds; each call sets it from the settings it was made with
        self._process: _Process | None = None
        self._starting = asyncio.Lock()
        self._numbers = itertools.count(1)
        self._idle: asyncio.TimerHandle | None = None

    @property
    def running(self) -> bool:
        return self._process is not None

    @property
    def pid(self) -> int | None:
        return self._process.popen.pid if self._process else None

    async def call(self, op: str, on_event: EventSink | None = None, **args: Any) -> Any:
        """Run `op` in the helper (starting it if needed) and return its result; `on_event` gets what it sends
        ahead of it. Raises HelperGone if the helper exits first, HelperFailed if the op raised there."""
        process = await self._started()
        number = next(self._numbers)
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        process.calls[number] = _Call(answer, on_event)
        self._hold()
        try:
            request: dict[str, Any] = {"id": number, "op": op, "args": args}
            if process.environment != os.environ:
                # litellm reads keys and addresses from the environment at each call: the helper's is this
                # process's as it is now (a copy from its start would miss a change)
                process.environment = request["environment"] = dict(os.environ)
            process.writer.write(wire.frame(request))
            return await answer
        except asyncio.CancelledError:
            if not process.writer.is_closing():
                process.writer.write(wire.frame({"cancel": number}))
            raise
        finally:
            process.calls.pop(number, None)
            self._release()

    async def warm(self) -> None:
        """Start the helper now (its library loads while the person types) and keep it for `idle_exit`."""
        try:
            await self._started()
        except HelperGone as exc:  # the call that follows says so to the person
            log.warning("%s", exc)
            return
        self._release()

    async def close(self) -> None:
        """Close the helper: its calls end with HelperGone. It exits on its own; it is killed if it lingers."""
        process, self._process = self._process, None
        if self._idle is not None:
            self._idle.cancel()
        if process is None:
            return
        process.writer.close()
        if await _exit_code(process.popen) is None:
            log.warning("the model helper did not exit; killing it")
            process.popen.kill()
            await _exit_code(process.popen)

    # ----- inside
    async def _started(self) -> _Process:
        async with self._starting:
            if self._process is None:
                self._process = await self._start()
            return self._process

    async def _start(self) -> _Process:
        ours, theirs = socket.socketpair()
        try:
            environment = dict(os.environ)
            popen = subprocess.Popen(helper_command(theirs.fileno()), pass_fds=(theirs.fileno(),), cwd="/",
                                     stdin=subprocess.DEVNULL, env=environment)
        except OSError as exc:
            ours.close()
            raise HelperGone(f"The model helper could not start: {exc}.") from exc
        finally:
            theirs.close()
        reader, writer = await asyncio.open_unix_connection(sock=ours)
        process = _Process(popen, writer, environment=environment)
        asyncio.get_running_loop().create_task(self._read(process, reader))
        log.info("model helper started (pid %d)", popen.pid)
        return process

    async def _read(self, process: _Process, reader: asyncio.StreamReader) -> None:
        while (message := await wire.read(reader)) is not None:
            if "log" in message:
                _relay(message["log"])
                continue
            call = process.calls.get(message.get("id", 0))
            if call is None or call.answer.done():
                continue
            if "event" in message:
                if call.on_event is not None:
                    call.on_event(message["event"])
            elif "result" in message:
                call.answer.set_result(message["result"])
            elif "error" in message:
                call.answer.set_exception(HelperFailed(message["error"]))
        gone = HelperGone(await self._why_gone(process))
        for call in process.calls.values():
            if not call.answer.done():
                call.answer.set_exception(gone)
        if self._process is process:
            self._process = None
        process.writer.close()

    @staticmethod
    async def _why_gone(process: _Process) -> str:
        code = await _exit_code(process.popen)
        if code is None:
            process.popen.kill()
            return "The model helper stopped answering."
        if code < 0:
            return f"The model helper was stopped (signal {-code})."
        return f"The model helper exited (code {code})." if code else "The model helper was closed."

    def _hold(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _release(self) -> None:
        """After a call or a warm-up: close the helper once `idle_exit` passes with no call running."""
        if self._process is None or self._process.calls:
            return
        if self._idle is not None:
            self._idle.cancel()
        self._idle = asyncio.get_running_loop().call_later(self.idle_exit, self._idle_close)

    def _idle_close(self) -> None:
        self._idle = None
        if self._process is not None and not self._process.calls:
            log.info("model helper closed after %.0f s without calls", self.idle_exit)
            asyncio.get_running_loop().create_task(self.close())


def _relay(record: dict[str, Any]) -> None:
    """A line of the helper's log (desktop/providers/helper_main.py), written to this process's log."""
    log.log(int(record.get("level", logging.WARNING)), "model helper: %s: %s", record.get("name"), record.get("text"))


async def _exit_code(popen: subprocess.Popen[bytes]) -> int | None:
    """The helper's exit code once it has exited, None if it has not within EXIT_WAIT. Polled rather than waited
    for on a thread: it may be asked while the interpreter shuts down, when no new thread can start."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EXIT_WAIT
    while (code := popen.poll()) is None and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return code


_helper: ModelHelper | None = None
_lock = threading.Lock()


def model_helper() -> ModelHelper:
    """The process's helper (on the model thread's loop)."""
    global _helper
    with _lock:
        if _helper is None:
            _helper = ModelHelper()
        return _helper


async def ask(op: str, on_event: EventSink | None = None, **args: Any) -> Any:
    """`ModelHelper.call` from any loop; `on_event` is called on the caller's loop, in order. Cancelling the
    caller cancels the op in the helper (a streamed answer's connection is closed)."""
    if in_model_thread():
        return await model_helper().call(op, on_event, **args)
    live = threading.Event()
    live.set()
    try:
        return await run_on_model_thread(model_helper().call(op, to_caller(on_event, live), **args))
    finally:
        live.clear()


def warm(idle_exit: float | None = None) -> None:
    """Start the helper ahead of a call the person is about to make (see the module's docstring), to be closed
    after `idle_exit` seconds without calls (None: as set before); returns at once, from any thread."""
    helper = model_helper()
    if idle_exit is not None:
        helper.idle_exit = idle_exit
    asyncio.run_coroutine_threadsafe(helper.warm(), model_loop())

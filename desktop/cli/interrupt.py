"""Ctrl+C during a turn stops the turn, as /stop does, instead of ending the program in the middle of it.

Killed, a turn leaves no word of what it was doing: the terminal chat lost the session, and `cron run-due`
exited silently after a one-shot reminder's turn had begun, the reminder gone from the list and shown
nowhere. Stopped, the turn ends as usual (its partial answer kept) and the command reports it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from desktop.core import Core
from desktop.kernel.taskset import spawn


@dataclass
class Interrupted:
    """Whether Ctrl+C was pressed while `stop_on_interrupt` was in force."""

    pressed: bool = False


@contextlib.contextmanager
def stop_on_interrupt(core: Core, sessions: Callable[[], Iterable[str]]) -> Iterator[Interrupted]:
    """Within: each Ctrl+C stops the running turns of the chats `sessions()` names then."""
    loop = asyncio.get_running_loop()
    interrupted = Interrupted()

    def stop() -> None:
        interrupted.pressed = True
        for key in sessions():
            spawn(core.loop.stop(key))

    try:
        loop.add_signal_handler(signal.SIGINT, stop)
        installed = True
    except (NotImplementedError, RuntimeError):  # Windows, or not the main thread: Ctrl+C ends the program
        installed = False
    try:
        yield interrupted
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGINT)

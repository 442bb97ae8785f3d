"""A test that hangs fails on its own, with its stack, and the run goes on to its summary.

pytest-timeout's `signal` method raises from a SIGALRM handler. That ends a test blocked in Python code or in
a system call, but not the hangs a Qt suite has, where the exception never reaches the test:
- an `await` on the qasync loop while Qt sits in poll(): no Python code runs, so the handler never does;
- a handler that runs inside a loop callback or a Qt slot: asyncio and PySide print the exception and go on;
- a nested Qt event loop (a dialog's exec(), qtbot.wait*): the handler runs in a slot, same fate.
This plugin implements pytest-timeout's timer hooks for the signal method. On a timeout it attaches every
thread's and task's stack to the test's report and interrupts the test: a pipe the Qt loop watches wakes it
(signal.set_wakeup_fd), the asyncio task pytest-asyncio runs is cancelled, the frames that were running raise
at their next line or return, and nested Qt loops are ended. A test still in the same phase a grace later (a
twelfth of its timeout, at least a second) is interrupted again; its teardown gets a grace of its own. Only a
test that stays stuck half its timeout more stops the run, after its stacks are printed and every process the
run started is killed."""

from __future__ import annotations

import asyncio
import dis
import io
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Generator
from types import FrameType
from typing import Any

import pytest
from pytest_timeout import Settings, is_debugging

from tests import reaper


class _Watch:
    """The timer of the running test and what happened since it went off."""

    def __init__(self, item: pytest.Item, settings: Settings) -> None:
        self.item, self.settings = item, settings
        self.message = f"Timeout (>{settings.timeout:g}s): the test hung and was interrupted"
        self.grace = max(1.0, settings.timeout / 12)
        self.give_up = settings.timeout / 2
        self.phase = ""
        self.stuck_since: float | None = None

    @property
    def fired(self) -> bool:
        return self.stuck_since is not None


_watch: _Watch | None = None
_phase = ""  # "setup", "call" or "teardown" while the running test is in one; "" in pytest's code between


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Settings) -> bool | None:
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return None  # pytest-timeout's own thread timer
    global _watch
    _watch = _Watch(item, settings)
    _wake_qt_on_signals()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, settings.timeout, _watch.grace)
    item.cancel_timeout = _cancel  # type: ignore[attr-defined]  # pytest-timeout's cancel hook calls it
    return True


def _cancel() -> None:
    global _watch
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    _Unwinder.disarm()
    _watch = None


def _in_phase(name: str) -> Generator[None, Any, Any]:
    __tracebackhide__ = True
    global _phase
    _phase = name
    try:
        result = yield
    except asyncio.CancelledError as exc:
        if _watch is not None and _watch.fired:  # the task we cancelled: say why
            raise pytest.fail.Exception(_watch.message) from exc
        raise
    finally:
        _phase = ""
    return result


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    __tracebackhide__ = True
    _wake_qt_on_signals()
    return (yield from _in_phase("setup"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    __tracebackhide__ = True
    _wake_qt_on_signals()  # a QApplication made by a fixture
    return (yield from _in_phase("call"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, Any]:
    __tracebackhide__ = True
    return (yield from _in_phase("teardown"))


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    __tracebackhide__ = True
    watch = _watch
    if watch is None or frame is None or (not watch.settings.disable_debugger_detection and is_debugging()):
        return
    now = time.monotonic()
    if watch.stuck_since is None:
        watch.stuck_since, watch.phase = now, _phase
        watch.item.add_report_section(_phase or "call", "stacks at the timeout", _stacks(frame))
    elif _phase != watch.phase:  # it got further: this phase gets a grace before it is interrupted
        watch.stuck_since, watch.phase = now, _phase
        return
    elif now - watch.stuck_since >= watch.give_up:
        _give_up(watch, frame)
    if _phase:
        _interrupt(watch, frame)


def _interrupt(watch: _Watch, frame: FrameType) -> None:
    """End nested Qt loops, cancel the running task, arm the _Unwinder, and raise here when that is safe: in
    a frame that was running or waiting in a call (a sleep, a lock, a read), what is raised reaches the test.
    Not in a frame that had only just been entered: that is the first Python code Qt ran after its poll() (a
    slot, or PySide's glue converting a slot's arguments, where an exception crashes the process)."""
    __tracebackhide__ = True
    _end_nested_qt_loops()
    task = _running_task(frame)
    if task is not None and not task.done():
        task.get_loop().call_soon_threadsafe(task.cancel, watch.message)
    _Unwinder.arm(frame, watch.message)
    if dis.opname[frame.f_code.co_code[frame.f_lasti]] != "RESUME":
        pytest.fail(watch.message)


def _running_task(frame: FrameType | None) -> asyncio.Future[Any] | None:
    """The task a loop's run_until_complete runs (pytest-asyncio's Runner, asyncio.run: the test's, or a
    fixture's)."""
    while frame is not None:
        if frame.f_code.co_name == "run_until_complete" and isinstance(frame.f_locals.get("future"), asyncio.Future):
            return frame.f_locals["future"]
        frame = frame.f_back
    return None


class _Unwinder:
    """Raises the timeout when one of the frames that were running at the timeout next runs a line or
    returns, outside exception handling. The handler itself may run in a Qt slot or a loop callback, which
    swallow what it raises; the frames that called into Qt run again once that returns, and raise from there
    to the test. Left alone: pytest's own frames and everything beyond them, the event loops' machinery
    (raising there breaks the loop, not the test; the task's cancel ends an await), and Qt's bindings (an
    exception in PySide's glue crashes the process). Disarmed once the test is past the phase."""

    SPARED = ("_pytest.", "pluggy.", "pytest_asyncio", "asyncio.", "qasync", "PySide6", "shiboken", "enum", __name__)

    frames: list[FrameType] = []
    previous: Any = None
    armed = False

    @classmethod
    def arm(cls, frame: FrameType, message: str) -> None:
        cls.disarm()
        frames, caller = [], frame.f_back
        while caller is not None and not caller.f_globals.get("__name__", "").startswith(("_pytest.", "pluggy.")):
            if not (caller.f_globals.get("__name__", "").startswith(cls.SPARED)
                    or isinstance(caller.f_locals.get("self"), asyncio.AbstractEventLoop)):
                frames.append(caller)
            caller = caller.f_back
        if not frames:
            return
        phase = _phase
        unwinding: set[int] = set()  # frames an exception is passing through

        def trace(running: FrameType, event: str, arg: Any) -> Any:
            __tracebackhide__ = True
            if _phase != phase:
                cls.disarm()
                return None
            if event == "exception":
                unwinding.add(id(running))
            elif event == "line":
                unwinding.discard(id(running))
            if event in ("line", "return") and id(running) not in unwinding and sys.exc_info()[0] is None:
                raise pytest.fail.Exception(message)
            return trace

        cls.frames, cls.previous, cls.armed = frames, sys.gettrace(), True
        for each in frames:
            each.f_trace = trace
        sys.settrace(lambda *_: None)  # events for the frames above; none for new ones

    @classmethod
    def disarm(cls) -> None:
        if not cls.armed:
            return
        for each in cls.frames:
            each.f_trace = None
        sys.settrace(cls.previous)
        cls.frames, cls.previous, cls.armed = [], None, False


_wakeup: tuple[int, int, Any] | None = None  # the pipe's read and write ends, the QSocketNotifier reading it


def _wake_qt_on_signals() -> None:
    """A signal interrupts Qt's poll() but runs no Python code, so the handler would wait for the next Qt
    event (forever, for a test awaiting a far timer). Have every signal write to a pipe that Qt watches."""
    global _wakeup
    qtcore = sys.modules.get("PySide6.QtCore")
    if qtcore is None or qtcore.QCoreApplication.instance() is None:
        return
    if _wakeup is None:
        read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        notifier = qtcore.QSocketNotifier(read_end, qtcore.QSocketNotifier.Type.Read)
        notifier.activated.connect(_drain_wakeup)  # no arguments: none to convert, nowhere else to interrupt
        _wakeup = (read_end, write_end, notifier)
    previous = signal.set_wakeup_fd(_wakeup[1], warn_on_full_buffer=False)
    if previous not in (-1, _wakeup[1]):
        signal.set_wakeup_fd(previous)  # a running loop's own (add_signal_handler): it wakes that loop


def _drain_wakeup() -> None:
    try:
        os.read(_wakeup[0], 4096)  # type: ignore[index]
    except BlockingIOError:
        pass


def _end_nested_qt_loops() -> None:
    qtcore = sys.modules.get("PySide6.QtCore")
    if qtcore is None or qtcore.QCoreApplication.instance() is None:
        return
    loop = asyncio._get_running_loop()
    on_qt = loop is not None and loop.is_running() and any(c.__module__ == "qasync" for c in type(loop).__mro__)
    base = 1 if on_qt else 0  # the qasync loop's own app.exec() is no nested loop
    if qtcore.QThread.currentThread().loopLevel() > base:
        qtcore.QCoreApplication.exit(1)  # every loop of this thread: the nested ones return


def _stacks(frame: FrameType) -> str:
    out = io.StringIO()
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    main = threading.main_thread().ident
    for ident, top in sys._current_frames().items():
        out.write(f"--- thread {names.get(ident, ident)}\n")
        out.write("".join(traceback.format_stack(frame if ident == main else top)))
    loop = asyncio._get_running_loop()
    for task in asyncio.all_tasks(loop) if loop is not None else ():
        out.write(f"--- task {task.get_name()} ({task.get_coro()!r})\n")
        task.print_stack(file=out)
    return out.getvalue()


def _give_up(watch: _Watch, frame: FrameType) -> None:
    """Nothing ended the test: print why the run stops here, kill what the run started, and exit. A
    pytest-xdist worker's terminal output goes nowhere (the controller prints only reports), so there the
    words go to its standard error, which reaches the run's output beside "node down"."""
    config = watch.item.config
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    said = [f"{'+' * 20} {watch.item.nodeid} stayed stuck {watch.give_up:g}s after its timeout: the run stops",
            _stacks(frame), *reaper.kill_all("the run stopped")]
    if hasattr(config, "workerinput"):
        os.write(2, ("\n".join(said) + "\n").encode(errors="replace"))
    else:
        terminal = config.get_terminal_writer()
        for line in said:
            terminal.line(line)
        terminal.flush()
    os._exit(1)

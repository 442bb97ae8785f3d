"""Every process a test starts dies with the test, also when the test fails or times out; a run leaves none.

pytest becomes a child subreaper (Linux prctl), so a process whose parent exits is re-parented to pytest
instead of init and stays in pytest's tree. The tree is noted before each test; after its teardown, a process
that appeared since and still runs is the test's: it is killed (with its process group when it leads one;
SIGTERM, then SIGKILL) and the test errors, naming it (a test that failed already only gets it listed in the
summary). The model helper this process starts for its model calls (desktop/providers/helper.py) is shared by
every test of the process, as by every chat of an app: it outlives the test that started it, closes itself when
idle and is killed at the end of the session. A process started while a longer-scoped fixture (module, session) set up belongs to that fixture,
with everything it starts: it may outlive a test, and is checked when the fixture is finalized. At the end of
the session, and when the run is stopped (SIGTERM is turned into an interrupt, so teardown runs), anything
still running under pytest is killed.

Processes are read from /proc/<pid>/task/<tid>/children, which costs little however busy the machine is."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from desktop.providers import HELPER_FLAG

PR_SET_CHILD_SUBREAPER = 36
# seconds a leftover process gets to finish exiting on its own (it may just have been told to);
# tests/test_suite_guards.py shortens it for the runs it makes: their leftovers never exit on their own
EXIT_GRACE = float(os.environ.get("TESTS_REAPER_EXIT_GRACE", "2.0"))
TERM_GRACE = 3.0  # seconds between SIGTERM and SIGKILL


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgid: int
    started: int  # clock ticks after boot: with the pid it names one process, even once pids are reused
    command: str

    @property
    def key(self) -> tuple[int, int]:
        return self.pid, self.started

    def __str__(self) -> str:
        return f"pid {self.pid}: {self.command}"


def _read(pid: int) -> Proc | None:
    """The process, or None once it has exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
    if rest[0] in ("Z", "X"):
        return None
    return Proc(pid, int(rest[1]), int(rest[2]), int(rest[19]), (argv or f"[{name}]")[:160])


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in threads:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found += [int(child) for child in f.read().split()]
        except OSError:
            continue
    return found


def tree() -> dict[tuple[int, int], Proc]:
    """Every running descendant of this process."""
    found: dict[tuple[int, int], Proc] = {}
    todo = _children(os.getpid())
    while todo:
        proc = _read(todo.pop())
        if proc is not None and proc.key not in found:
            found[proc.key] = proc
            todo += _children(proc.pid)
    return found


def _alive(procs: Iterable[Proc]) -> list[Proc]:
    return [p for p in procs if (now := _read(p.pid)) is not None and now.started == p.started]


def _signal(procs: Iterable[Proc], signum: int) -> None:
    own_group = os.getpgid(0)
    for proc in procs:
        try:
            if proc.pgid == proc.pid and proc.pgid != own_group:
                os.killpg(proc.pgid, signum)
            else:
                os.kill(proc.pid, signum)
        except ProcessLookupError:
            pass


def _wait_gone(procs: list[Proc], seconds: float) -> list[Proc]:
    deadline = time.monotonic() + seconds
    while (procs := _alive(procs)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return procs


def kill(procs: list[Proc]) -> None:
    """SIGTERM, then SIGKILL what is left after TERM_GRACE; then reap the orphans pytest adopted (no Popen
    waits for those; its own children are left to theirs)."""
    _signal(procs, signal.SIGTERM)
    left = _wait_gone(procs, TERM_GRACE)
    _signal(left, signal.SIGKILL)
    _wait_gone(left, TERM_GRACE)
    for proc in procs:
        if proc.ppid != os.getpid():
            try:
                os.waitpid(proc.pid, os.WNOHANG)
            except ChildProcessError:
                pass


_owner: dict[tuple[int, int], pytest.FixtureDef[Any]] = {}  # processes of longer-scoped fixtures -> the fixture
_before: dict[tuple[int, int], Proc] = {}  # the tree when the running test started
_failed: set[str] = set()  # tests that have failed already
_killed: list[str] = []  # for the summary


def kill_all(why: str) -> list[str]:
    """Kill every process under pytest; lines saying what was killed."""
    left = list(tree().values())
    kill(left)
    lines = [f"{why}: killed {proc}" for proc in left]
    _killed.extend(lines)
    return lines


def _belongs_elsewhere(proc: Proc, now: dict[tuple[int, int], Proc], before: dict[tuple[int, int], Proc]) -> bool:
    """Whether the process, or one of its ancestors under pytest, is older than the test or a fixture's."""
    by_pid = {p.pid: p for p in now.values()}
    current: Proc | None = proc
    while current is not None:
        if current.key in before or current.key in _owner:
            return True
        current = by_pid.get(current.ppid)
    return False


def pytest_configure(config: pytest.Config) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _stop_on_sigterm)


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends the process at once
    raise KeyboardInterrupt("SIGTERM")


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Generator[None, Any, Any]:
    if fixturedef.scope == "function":
        return (yield)
    before = tree()
    try:
        return (yield)
    finally:
        for key in tree().keys() - before.keys():
            _owner[key] = fixturedef


def pytest_fixture_post_finalizer(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> None:
    if fixturedef.scope == "function":
        return
    mine = {key for key, owner in _owner.items() if owner is fixturedef}
    for key in mine:
        del _owner[key]
    now = tree()
    left = [proc for proc in now.values() if proc.key in mine or _descends_from(proc, mine, now)]
    left = _wait_gone(left, EXIT_GRACE)
    if left:
        kill(left)
        _killed.extend(f"{fixturedef.scope} fixture {fixturedef.argname}: killed {proc}" for proc in left)


def _descends_from(proc: Proc, keys: set[tuple[int, int]], now: dict[tuple[int, int], Proc]) -> bool:
    by_pid = {p.pid: p for p in now.values()}
    current = by_pid.get(proc.ppid)
    while current is not None:
        if current.key in keys:
            return True
        current = by_pid.get(current.ppid)
    return False


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    global _before
    _before = tree()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.failed:
        _failed.add(item.nodeid)
    return report


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    try:
        result = yield
    except BaseException:
        _kill_leftovers(item)  # the teardown's own error says enough
        raise
    left = _kill_leftovers(item)
    if left and item.nodeid not in _failed:
        pytest.fail("the test left processes running (now killed):\n" + "\n".join(map(str, left)), pytrace=False)
    return result


def _shared_helper(proc: Proc) -> bool:
    """This process's own model helper (see the module's docstring)."""
    return proc.ppid == os.getpid() and HELPER_FLAG in proc.command.split()


def _kill_leftovers(item: pytest.Item) -> list[Proc]:
    now = tree()
    left = [proc for proc in now.values() if proc.key not in _before and not _belongs_elsewhere(proc, now, _before)
            and not _shared_helper(proc)]
    left = _wait_gone(left, EXIT_GRACE)
    if left:
        kill(left)
        _killed.extend(f"{item.nodeid}: killed {proc}" for proc in left)
    return left


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    kill([proc for proc in tree().values() if _shared_helper(proc)])  # expected to be there: not reported
    kill_all("still running at the end of the session")
    workeroutput = getattr(session.config, "workeroutput", None)  # a pytest-xdist worker: the controller prints
    if workeroutput is not None:
        workeroutput["killed"] = list(_killed)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    _killed.extend(getattr(node, "workeroutput", {}).get("killed", []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _killed:
        terminalreporter.section("processes left running, killed", sep="=")
        for line in _killed:
            terminalreporter.line(line)

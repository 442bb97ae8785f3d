"""What one `exec` command, with everything it starts, may use — held by the kernel, never by watching.

A runaway (a fork bomb, a memory hog, a command filling the disk) stops at its limit, the tool result says
which limit stopped it, and the app itself is never limited: the limits are set in the command's first
process and inherited by what it starts.

Memory, file size and processor time are rlimits (hard limits) set by util-linux `prlimit` as the first
program of the command — inside the sandbox, so that bubblewrap has already made the command's user
namespace (see processes below). A command cannot raise a hard limit without CAP_SYS_RESOURCE, and the
sandbox drops every capability; unsandboxed as root it could. Each binds one process, not the tree:
- memory is RLIMIT_DATA (what a process has written or may write privately: heap, anonymous maps), not
  RLIMIT_AS, which also counts address space a program only reserves: with RLIMIT_AS at 2048 MB Java does
  not start (it reserves 1 GB for class metadata alone), with RLIMIT_DATA it does. A command that runs
  many processes may use up to the memory limit in each of them;
- a file is RLIMIT_FSIZE: writing past it kills the writer with SIGXFSZ (programs that ignore the signal,
  Python among them, get EFBIG, "File too large"); what it wrote up to the limit stays;
- processor time is RLIMIT_CPU at the timeout on every core, so it never stops a command sooner than the
  timeout would, and it ends a process that left its call (see shell.py) once it has used that much.

Processes are the hard part: RLIMIT_NPROC counts every task (threads too) of the real user on the whole
machine, not the command's tree, and never binds root. So, in order of preference:
- where the app can make a pids cgroup (as root: cgroup v1's pids hierarchy, or cgroup v2 with the pids
  controller already on at the top), each command runs in one of its own with `pids.max`: exact for the
  tree, and `pids.events` says when it was hit. (A systemd user scope could give a normal user the same;
  it needs a running user manager with delegation, and is not used.)
- sandboxed as a normal user: unprivileged bwrap runs the command in a user namespace of its own, and since
  Linux 5.14 the kernel keeps the count per user namespace and user, so RLIMIT_NPROC set inside counts
  the command's tasks alone. Set before bwrap, the kernel would also record it as the namespace's ceiling
  for all of the user's tasks, which is why prlimit runs inside.
- otherwise, as a normal user (unsandboxed; a setuid bwrap, which makes no user namespace; Linux before
  5.14, which counted per user on the whole machine): RLIMIT_NPROC is the user's tasks when the command
  starts plus the limit; what the user starts elsewhere meanwhile shares that room.
- as root with no cgroup to make: processes are not limited (doctor says so); the timeout still ends them.

Which limit stopped a command: the kernel's evidence where there is some (SIGXFSZ or SIGXCPU in the exit
status or in a shell's report of a child, the cgroup's `pids.events`); otherwise, only when the command
failed, what programs print when the kernel refuses them a process ("Cannot fork", "Resource temporarily
unavailable") or memory (MemoryError, "Cannot allocate memory"); and at a timeout, whether the command's
session held as many tasks as it may (a bomb that ignores failed forks prints nothing).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import os
import platform
import re
import shutil
import signal
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, auto
from pathlib import Path

from desktop.tools.base import ToolError
from desktop.tools.settings import ExecConfig

log = logging.getLogger(__name__)

_MB = 1024 * 1024
_SHELL = "/bin/sh"
# cgroup v1's pids hierarchy, then v2's unified one (on a v1 system /sys/fs/cgroup itself is a tmpfs).
_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
_CGROUP_PREFIX = "nanobot-tray-exec"
# The first process moves itself into the cgroup, then becomes the command: nothing runs outside it.
_JOIN = 'echo $$ > "$0" && exec "$@"'
_BWRAP_PROCESSES = 2  # bwrap and its init (pid 1 of the command's namespace) sit in the cgroup too
_BWRAP_IN_NAMESPACE = 1  # of those, only the init shares the command's user namespace
_SETTLE_ROUNDS = 100  # x 20 ms: killing a cgroup's last tasks and removing it
# What programs print when the kernel refuses them a process or memory (read only when a command failed).
_FORK_REFUSED = re.compile(r"cannot fork|can't fork|fork: (?:retry: )?resource temporarily unavailable|"
                           r"\[errno 11\] resource temporarily unavailable|failed to create new os thread|"
                           r"unable to create (?:new )?native thread|spawn eagain", re.IGNORECASE)
_MEMORY_REFUSED = re.compile(r"memoryerror|cannot allocate memory|memory exhausted|cannot allocate \d+ bytes|"
                             r"out of memory|bad_alloc", re.IGNORECASE)
# How shells report a child the kernel killed for a limit (strsignal of SIGXFSZ and SIGXCPU), and EFBIG.
_FILE_SIGNALLED = "File size limit exceeded"
_CPU_SIGNALLED = "CPU time limit exceeded"
_FILE_REFUSED = "File too large"
NO_SPACE = "No space left on device"  # ENOSPC: a full private folder of the sandbox (or a full disk)


class Counting(Enum):
    """How the process limit is held (see the module docstring)."""

    CGROUP = auto()  # a pids cgroup per command
    NAMESPACE = auto()  # RLIMIT_NPROC in the command's own user namespace
    USER = auto()  # RLIMIT_NPROC on top of the user's other tasks
    NONE = auto()  # root, no cgroup


@dataclass(frozen=True)
class Limits:
    """What one command and everything it starts may use (tools.exec.max_*)."""

    processes: int
    memory_mb: int
    file_mb: int

    @classmethod
    def of(cls, config: ExecConfig) -> Limits:
        return cls(config.max_processes, config.max_memory_mb, config.max_file_mb)

    async def for_call(self, sandbox_program: str | None, timeout: int) -> CallLimits:
        """The limits of one command, run by `sandbox_program` (bwrap) or, with None, unsandboxed. May
        make a cgroup: `CallLimits.close` removes it."""
        counting = await asyncio.to_thread(counting_here, sandbox_program)
        cgroup, nproc = None, None
        try:
            if counting is Counting.CGROUP:
                extra = _BWRAP_PROCESSES if sandbox_program else 0
                cgroup = await asyncio.to_thread(_PidsCgroup.make, self.processes + extra)
            elif counting is Counting.NAMESPACE:
                nproc = self.processes + _BWRAP_IN_NAMESPACE
            elif counting is Counting.USER:
                nproc = await asyncio.to_thread(_user_tasks, os.getuid()) + self.processes
        except OSError as exc:
            raise ToolError(f"could not set up the command's process limit ({exc})") from None
        return CallLimits(self, timeout, counting, nproc, cgroup, _prlimit())


DEFAULT_LIMITS = Limits.of(ExecConfig())


def counting_here(sandbox_program: str | None) -> Counting:
    """How processes are limited for a command run by `sandbox_program` (None: unsandboxed)."""
    if _pids_root() is not None:
        return Counting.CGROUP
    if os.getuid() == 0:
        return Counting.NONE
    if sandbox_program is not None and _own_user_namespace(sandbox_program) and _counts_per_namespace():
        return Counting.NAMESPACE
    return Counting.USER


def describe(limits: Limits, sandbox_program: str | None) -> str:
    """The limits in force and how they hold, in words for doctor."""
    n = limits.processes
    processes = {
        Counting.CGROUP: f"at most {n} processes and threads (a cgroup per command holds them)",
        Counting.NAMESPACE: f"at most {n} processes and threads (counted in the command's own user namespace)",
        Counting.USER: f"at most {n} processes and threads more than your account runs when it starts "
                       "(the kernel counts them together with all of your other processes here)",
        Counting.NONE: "processes not limited (as root the kernel's per-user count does not apply, and no "
                       "pids cgroup can be made here)",
    }[counting_here(sandbox_program)]
    if _prlimit() is None:
        return f"{processes}; memory, file size and processor time not limited: prlimit (util-linux) is missing"
    return (f"{processes}; {limits.memory_mb} MB of memory per process, files up to {limits.file_mb} MB, "
            "processor time up to the timeout on each core")


class CallLimits:
    """One command's limits: the words that set them, stopping what is left, and which limit stopped it."""

    def __init__(self, limits: Limits, timeout: int, counting: Counting, nproc: int | None,
                 cgroup: _PidsCgroup | None, prlimit: str | None) -> None:
        self.limits = limits
        self.timeout = timeout
        self.cores = os.cpu_count() or 1
        self.counting = counting
        self.nproc = nproc
        self.cgroup = cgroup
        self.prlimit = prlimit
        self.full_at_timeout = False
        self.memory_folders = False  # the sandbox holds each of its private folders to `memory_mb` (set by exec)

    @property
    def cpu_seconds(self) -> int:
        return self.timeout * self.cores

    def command(self, argv: Sequence[str]) -> list[str]:
        """`argv` under the rlimits; goes inside the sandbox (the process count starts in its namespace)."""
        if self.prlimit is None:
            return list(argv)
        words = [self.prlimit, f"--data={self.limits.memory_mb * _MB}", f"--fsize={self.limits.file_mb * _MB}",
                 # soft then hard: SIGXCPU names the limit; a process that catches it is killed a second later
                 f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}",
                 "--core=0"]  # a process killed for a limit must not write a core dump as large as its memory
        if self.nproc is not None:
            words.append(f"--nproc={self.nproc}")
        return [*words, "--", *argv]

    def launch(self, argv: Sequence[str]) -> list[str]:
        """`argv` (the sandbox, or the command itself) started inside the call's cgroup, if it has one."""
        if self.cgroup is None:
            return list(argv)
        return [_SHELL, "-c", _JOIN, str(self.cgroup.path / "cgroup.procs"), *argv]

    async def note_timeout(self, session: int) -> None:
        """At the timeout, before the kill: a command that held as many tasks as it may was stopped by the
        process limit too, even if nothing it ran said so."""
        if self.counting in (Counting.NAMESPACE, Counting.USER):
            self.full_at_timeout = await asyncio.to_thread(_session_tasks, session) >= self.limits.processes

    async def stop_all(self) -> None:
        """Kill whatever of the command is left in its cgroup (what left its session, too)."""
        if self.cgroup is not None:
            await self.cgroup.kill_all()

    async def close(self) -> None:
        if self.cgroup is not None:
            await self.cgroup.kill_all()
            await self.cgroup.remove()

    def stopped(self, returncode: int | None, output: str, disk_full: bool = False) -> str | None:
        """Which limits stopped the command, in words, or None. `returncode` None: it timed out. `disk_full`:
        the disk it writes to has no room either, so a write refused for want of room is not put down to a
        private folder."""
        failed = returncode != 0
        found = []
        if self.prlimit is not None:
            if _signalled(returncode, signal.SIGXFSZ) or _FILE_SIGNALLED in output \
                    or (failed and _FILE_REFUSED in output):
                found.append(f"it wrote a file larger than {self.limits.file_mb} MB (tools.exec.max_file_mb)")
            if _signalled(returncode, signal.SIGXCPU) or _CPU_SIGNALLED in output:
                found.append(f"it used more than {self.cpu_seconds} s of processor time (the {self.timeout} s "
                             f"timeout on each of {self.cores} cores)")
        if self.cgroup is not None:
            processes = self.cgroup.hit()
        else:
            processes = self.counting is not Counting.NONE and (
                self.full_at_timeout or (failed and _FORK_REFUSED.search(output) is not None))
        if processes:
            found.append(f"it started more than {self.limits.processes} processes (tools.exec.max_processes)")
        if self.prlimit is not None and failed and _MEMORY_REFUSED.search(output):
            found.append(f"it used more than {self.limits.memory_mb} MB of memory (tools.exec.max_memory_mb)")
        if self.memory_folders and failed and NO_SPACE in output and not disk_full:
            found.append(f"it filled /tmp or another of its folders held in memory (each holds up to "
                         f"{self.limits.memory_mb} MB, tools.exec.max_memory_mb)")
        return " and ".join(found) or None


def _prlimit() -> str | None:
    """util-linux's prlimit from the system's own folders, which the sandbox shows (one under home or /run
    would be hidden from the command, and the command would not start)."""
    return shutil.which("prlimit", path=os.defpath)


def _signalled(returncode: int | None, sig: signal.Signals) -> bool:
    """Killed by `sig`: the process itself (negative), or a child as its shell or bwrap reports it."""
    return returncode is not None and returncode in (-sig, 128 + sig)


class _PidsCgroup:
    """A pids cgroup for one command: `pids.max` holds its tasks, `pids.events` says whether it hit that."""

    _made = itertools.count()

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def make(cls, limit: int) -> _PidsCgroup:
        root = _pids_root()
        if root is None:
            raise OSError("no pids cgroup can be made here")
        path = root / f"{_CGROUP_PREFIX}-{os.getpid()}-{next(cls._made)}"
        path.mkdir()
        try:
            _write(path / "pids.max", str(limit))
        except OSError:
            path.rmdir()
            raise
        return cls(path)

    def hit(self) -> bool:
        try:
            events = (self.path / "pids.events").read_text()
        except OSError:
            return False
        return any(fields[:1] == ["max"] and fields[1:2] != ["0"] for fields in map(str.split, events.splitlines()))

    async def kill_all(self) -> None:
        """SIGKILL every member until none is left (a fork bomb may still fork between two rounds)."""
        for _ in range(_SETTLE_ROUNDS):
            try:
                members = [int(pid) for pid in (self.path / "cgroup.procs").read_text().split()]
            except FileNotFoundError:
                return
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            await asyncio.sleep(0.02)
        log.warning("processes of a command are still in %s after being killed", self.path)

    async def remove(self) -> None:
        """rmdir succeeds once the killed tasks are gone; a leftover empty cgroup is harmless but logged."""
        for _ in range(_SETTLE_ROUNDS):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                await asyncio.sleep(0.02)
        log.warning("could not remove the command's cgroup %s", self.path)


@functools.cache
def _pids_root() -> Path | None:
    """Where this process may make pids cgroups, found once by making (and removing) one."""
    for root in _PIDS_ROOTS:
        if not (root / "cgroup.procs").is_file():  # not a cgroup file system
            continue
        probe = root / f"{_CGROUP_PREFIX}-{os.getpid()}-probe"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            if (probe / "pids.max").is_file():
                return root
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return None


def _write(path: Path, text: str) -> None:
    """Write an existing cgroup file (never create one: on a plain file system that would do nothing)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _own_user_namespace(program: str) -> bool:
    """Unprivileged bwrap gives each command a user namespace; a setuid one does not, and RLIMIT_NPROC set
    inside would then count every process of the user."""
    found = shutil.which(program)
    return found is not None and not os.stat(found).st_mode & stat.S_ISUID


def _counts_per_namespace() -> bool:
    """Linux counts RLIMIT_NPROC per user namespace since 5.14; before, per user on the whole machine."""
    found = re.match(r"(\d+)\.(\d+)", platform.release())
    return found is not None and (int(found[1]), int(found[2])) >= (5, 14)


def _user_tasks(uid: int) -> int:
    """Tasks (threads included) whose real user is `uid`: what RLIMIT_NPROC counts outside a namespace."""
    total = 0
    for status in _proc_files("status"):
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            total += int(fields.get("Threads", "1"))
    return total


def _session_tasks(session: int) -> int:
    """Tasks (threads included) of the processes in `session`."""
    total = 0
    for line in _proc_files("stat"):
        fields = line.rpartition(")")[2].split()  # after the command name, which may hold anything
        if len(fields) > 17 and fields[3] == str(session):
            total += int(fields[17])
    return total


def _proc_files(name: str) -> list[str]:
    """/proc/PID/`name` of every process that is still there when read."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                found.append(Path(entry.path, name).read_text())
    return found

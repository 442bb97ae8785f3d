"""The `exec` sandbox: bubblewrap (`bwrap`) confines each command on Linux.

Refusing dangerous spellings cannot stop a command that builds a path at run time, so the OS does the
containing: inside the sandbox the workspace is the only writable folder that persists, the system is
read-only, /tmp is private, the home folder, the app's config and data and everything under /run (keyring,
D-Bus session bus, ssh and gpg agents, docker socket) are hidden, skill folders and the app-managed memory
files are read-only, the command has its own pid namespace (no /proc of the app), no capabilities and no new
privileges, and the whole process tree dies with the tool call. The network is its own too, with public
internet only by default (desktop/tools/sandbox_network.py). Where bwrap cannot run, `mode` says why and exec
falls back to its refusals alone.

The private folders (/tmp, /var/tmp, the hidden home and the others, /dev/shm) are held in memory (tmpfs), each
up to the memory limit of one process (tools.exec.max_memory_mb), and /dev itself is read-only. Unsized, each
could grow to half of the computer's memory, several together past all of it, and the out-of-memory killer
cannot free a folder by killing its writer: it killed other programs, the app among them. bwrap sizes a tmpfs
from version 0.7 on; an older one leaves them unsized, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.config import Config
from desktop.kernel.paths import Home, inside
from desktop.tools.base import ToolError
from desktop.tools.egress import egress_proxy
from desktop.tools.sandbox_network import HOST, INTERNET, NOT_ENFORCED, Network, bwrap_words, network_in_force, relayed
from desktop.workspace import access
from desktop.workspace.programs import InWorkspace, program_outside

PROGRAM = "bwrap"
_PROBE_TIMEOUT = 10.0
# Namespaces and privileges: own pids (the app's /proc is out of sight), no capabilities even when run as
# root (bwrap always sets no_new_privs), killed with its parent so nothing outlives the tool call.
_ISOLATION = ("--unshare-pid", "--die-with-parent", "--cap-drop", "ALL")
_BASE = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")


@dataclass(frozen=True)
class SandboxMode:
    """Which containment is in force for `exec`, in words for doctor and Settings."""

    sandboxed: bool
    description: str
    network: Network = NOT_ENFORCED
    refusal: str = ""  # why no command runs at all (running it without the sandbox would fail open)


class Sandbox:
    """Builds the bwrap command line for one workspace. `read_only` folders (skills) stay visible but
    unwritable, `protected` files (app-managed memory files) are read-only, `hidden` folders (home, app
    config and data) are replaced by empty ones. `network` is a tools.exec.network mode."""

    def __init__(self, workspace: Path, *, read_only: Sequence[Path] = (), protected: Sequence[Path] = (),
                 hidden: Sequence[Path] = (), network: str = INTERNET, program: str = PROGRAM) -> None:
        self.workspace = workspace.resolve()
        self.read_only = [p.resolve() for p in read_only]
        self.protected = list(protected)  # as named: a link there is judged when mounting, not followed now
        self.hidden = [p.resolve() for p in hidden]
        self.network = network
        self.program = program

    async def mode(self) -> SandboxMode:
        """Whether bwrap really runs here (probed once per process), with the network in force now (socat
        installed while the app runs is used from the next command on)."""
        key = (self.program, self.network == HOST)
        try:  # where bwrap is found is asked every time: the workspace in force may have changed
            argv = await asyncio.to_thread(self._probe_argv)
        except InWorkspace as exc:
            return _refusing(str(exc))
        if argv is None:  # not remembered: a bwrap installed (or a PATH mended) while the app runs is used at once
            return _not_installed()
        verdict = _probed.get(key) or _remembered(key, await _probe_async(argv))
        return _with_network(verdict, await asyncio.to_thread(network_in_force, self.network))

    def mode_now(self) -> SandboxMode:
        """The same answer without an event loop (doctor)."""
        key = (self.program, self.network == HOST)
        try:
            argv = self._probe_argv()
        except InWorkspace as exc:
            return _refusing(str(exc))
        if argv is None:
            return _not_installed()
        verdict = _probed.get(key) or _remembered(key, _probe_sync(argv))
        return _with_network(verdict, network_in_force(self.network))

    @contextlib.asynccontextmanager
    async def command(self, argv: Sequence[str], cwd: Path, folder_mb: int | None = None) -> AsyncIterator[list[str]]:
        """`argv` as run inside the sandbox (see `wrap`), with the network its mode grants open until the
        block ends: in internet mode, an egress proxy of its own."""
        network = (await self.mode()).network
        if network.mode != INTERNET:
            yield await asyncio.to_thread(self.wrap, argv, cwd, network, None, folder_mb)
            return
        async with egress_proxy() as egress:
            yield await asyncio.to_thread(self.wrap, argv, cwd, network, egress, folder_mb)

    def wrap(self, argv: Sequence[str], cwd: Path, network: Network, egress: Path | None = None,
             folder_mb: int | None = None) -> list[str]:
        """`argv` as run inside the sandbox, starting in `cwd` (inside the workspace), with `network`
        (`egress`: the proxy's socket in internet mode), each private folder holding up to `folder_mb` MB. bwrap
        is looked up again for each command: the workspace in force may have put a folder of PATH in its reach
        since the probe."""
        try:  # after a probe that found it elsewhere (its verdict is kept)
            program = self._installed()
        except InWorkspace as exc:
            raise ToolError(f"command not run: {exc}") from exc
        if program is None:
            raise ToolError(f"command not run: {self.program} is no longer installed")
        size = ["--size", str(folder_mb * 2**20)] if folder_mb is not None and takes_size(program) else []
        mounts = self._mounts(size)
        flat = [word for _, _, words in sorted(mounts, key=lambda m: (m[0], m[1])) for word in words]
        dev = ["--remount-ro", "/dev", *size, "--tmpfs", "/dev/shm"] if size else []
        return [program, *_BASE, *dev, *flat, *_ISOLATION, *bwrap_words(network, egress),
                "--setenv", "TMPDIR", "/tmp", "--chdir", str(cwd), "--", *relayed(argv, network, egress)]

    def _mounts(self, size: list[str]) -> list[tuple[int, int, list[str]]]:
        """(depth, order, bwrap words): applied parents first, so a bind inside a hidden folder shows
        through it and a hidden folder inside the workspace stays hidden. `size`: bwrap's words that size the
        next tmpfs, if any."""
        mounts: list[tuple[int, int, list[str]]] = []

        def add(path: Path, order: int, kind: str) -> None:
            words = [*size, kind, str(path)] if kind == "--tmpfs" else [kind, str(path), str(path)]
            if not any(words == seen for _, _, seen in mounts):
                mounts.append((len(path.parts), order, words))

        for path in self.hidden:
            if path.is_dir():
                add(path, 0, "--tmpfs")
        resolver = Path("/etc/resolv.conf").resolve()
        if resolver.is_file() and Path("/run") in resolver.parents:  # systemd-resolved keeps it under /run
            add(resolver, 1, "--ro-bind")
        add(self.workspace, 1, "--bind")
        for path in self.read_only:
            if path.exists():
                add(path, 1, "--ro-bind")
        for path in self.protected:
            if not inside(path, self.workspace) or not _plain_file(path, self.workspace):
                continue
            if path.parent != self.workspace:  # a mount point cannot be renamed: the folder stays put
                add(path.parent, 1, "--bind")
            add(path, 2, "--ro-bind")
        return mounts

    def _installed(self) -> str | None:
        """bwrap by the absolute name of the file that will run, None when it is not installed. Raises InWorkspace
        when that file is in the workspace: the commands it would contain wrote it (desktop/workspace/programs.py)."""
        return program_outside(self.program, self.workspace, cwd=Path("/"))

    def _probe_argv(self) -> list[str] | None:
        found = self._installed()
        if found is None:
            return None
        network = [] if self.network == HOST else ["--unshare-net"]
        return [found, *_BASE, *_ISOLATION, *network, "--", "true"]


_probed: dict[tuple[str, bool], SandboxMode] = {}  # (program, shares the network) -> bwrap's verdict
RESTRICTION_OFF = SandboxMode(False, "not sandboxed: tools.restrict_to_workspace is off, so commands can "
                                     "reach the whole computer")
_sizes: dict[str, bool] = {}  # program -> whether it sizes a tmpfs
_sizes_lock = threading.Lock()


def sizes_folders(wrapped: list[str]) -> bool:
    """Whether a command line `wrap` made holds the private folders to a size (bwrap's words before its `--`)."""
    return "--size" in wrapped[:wrapped.index("--")]


def takes_size(program: str) -> bool:
    """Whether this bwrap sizes a tmpfs (`--size`, bwrap 0.7 and later): an older one refuses a command line
    with it, so it is asked once (its usage lists its options). A bwrap too slow to answer is asked again."""
    with _sizes_lock:
        if program in _sizes:
            return _sizes[program]
        try:
            done = subprocess.run([program, "--help"], stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=_PROBE_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            return False
        except OSError:
            done = None
        _sizes[program] = done is not None and b"--size" in done.stdout + done.stderr
        return _sizes[program]


def _unavailable(why: str) -> SandboxMode:
    return SandboxMode(False, f"not sandboxed: {why}; dangerous commands are still refused")


def _refusing(why: str) -> SandboxMode:
    return SandboxMode(False, f"commands are not run: {why}", refusal=why)


def _not_installed() -> SandboxMode:
    if not sys.platform.startswith("linux"):
        return _unavailable("the sandbox (bubblewrap) exists on Linux only")
    return _unavailable("bubblewrap (bwrap) is not installed — install the `bubblewrap` package")


# bwrap is there but slow: running the command without it would fail open
NO_ANSWER = SandboxMode(False, "not sandboxed: bwrap did not answer; dangerous commands are still refused",
                        refusal="the sandbox did not start in time (the computer may be busy); try again in a moment")


def _with_network(verdict: SandboxMode, network: Network) -> SandboxMode:
    """bwrap's verdict with `network`; without the sandbox no network mode is enforced (NOT_ENFORCED)."""
    if not verdict.sandboxed:
        return verdict
    shared = "shared with this computer" if network.mode == HOST else "its own"
    return SandboxMode(True, f"{verdict.description}, the network {shared}", network)


def _remembered(key: tuple[str, bool], verdict: SandboxMode) -> SandboxMode:
    """Keep bwrap's verdict for the rest of the run, unless it is only that bwrap was too slow to answer: a
    busy moment must not leave every later command unsandboxed, so the next command probes again."""
    if not verdict.refusal:
        _probed[key] = verdict
    return verdict


def _judge(returncode: int, stderr: str) -> SandboxMode:
    if returncode == 0:
        return SandboxMode(True, "sandboxed with bubblewrap: the workspace is writable, the system read-only, "
                                 "home and the app's own files hidden")
    reason = (stderr.strip().splitlines() or [f"exit code {returncode}"])[-1]
    return _unavailable(f"bwrap cannot run here ({reason}); unprivileged user namespaces may be disabled")


async def _probe_async(argv: list[str]) -> SandboxMode:
    started: list[asyncio.subprocess.Process] = []
    probe = asyncio.ensure_future(_probe_once(argv, started))
    try:
        return await asyncio.shield(probe)
    except asyncio.CancelledError:  # the first command was stopped mid-probe: the probe goes with it, and is
        with contextlib.suppress(Exception):  # reaped before the stop returns. bwrap may still be starting:
            async with asyncio.timeout(_PROBE_TIMEOUT + 1):  # it is killed the moment it has started, not
                while not probe.done():  # left to answer (on a busy machine it took the whole probe time,
                    for proc in started:  # and so did the Stop a person pressed)
                        with contextlib.suppress(ProcessLookupError):
                            proc.kill()
                    await asyncio.wait([probe], timeout=0.05)
        raise


async def _probe_once(argv: list[str], started: list[asyncio.subprocess.Process]) -> SandboxMode:
    try:
        proc = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.PIPE)
    except OSError as exc:
        return _unavailable(f"bwrap cannot start ({exc})")
    started.append(proc)
    try:
        async with asyncio.timeout(_PROBE_TIMEOUT):
            _, err = await proc.communicate()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return NO_ANSWER
    return _judge(proc.returncode or 0, err.decode("utf-8", "replace"))


def _probe_sync(argv: list[str]) -> SandboxMode:
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=_PROBE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return NO_ANSWER
    except OSError as exc:
        return _unavailable(f"bwrap cannot start ({exc})")
    return _judge(done.returncode, done.stderr.decode("utf-8", "replace"))


def exec_sandbox(config: Config, h: Home, workspace: Path, skill_folders: Sequence[Path] = (),
                 protected: Sequence[Path] = ()) -> Sandbox | None:
    """The sandbox `exec` runs in, or None when the workspace restriction is off (the user let commands
    reach the whole computer: RESTRICTION_OFF)."""
    if not config.tools.restrict_to_workspace:
        return None
    return Sandbox(workspace, read_only=skill_folders, protected=protected,
                   hidden=_hidden_folders(h), network=config.tools.exec.network)


def _hidden_folders(h: Home) -> list[Path]:
    """Everything personal or belonging to the app: homes, /run (keyring and agent sockets), temp folders
    (a private /tmp), and the app's config and data wherever NANOBOT_TRAY_HOME put them."""
    folders = [Path("/home"), Path("/root"), Path.home(), Path("/run"), Path("/tmp"), Path("/var/tmp"),
               h.config_file.parent, h.data_dir]
    if runtime := os.environ.get("XDG_RUNTIME_DIR"):
        folders.append(Path(runtime))
    return folders


def _plain_file(path: Path, workspace: Path) -> bool:
    """Whether a protected file can be mounted read-only as itself: made empty when absent ("nothing yet" to
    its reader), and no link on its way. bwrap follows a link in a bind's source, so a link there would put
    its target, perhaps a file the sandbox hides, into the sandbox: such a file is left unmounted (the app
    refuses to read it anyway)."""
    relpath = str(path.relative_to(workspace))
    try:
        access.create_text(workspace, relpath, "")  # never through a dangling link
    except OSError:
        return False
    return os.path.realpath(path) == str(path)

"""The `exec` tool: run a shell command in the workspace with a timeout, a clean environment and guard rails."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import re
import shlex
import shutil
import signal
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.kernel.paths import inside
from desktop.tools.base import Tool, ToolContext, ToolError, ToolOutput, cap_text
from desktop.tools.limits import DEFAULT_LIMITS, NO_SPACE, CallLimits, Limits
from desktop.tools.live_tail import LiveTail
from desktop.tools.sandbox import RESTRICTION_OFF, Sandbox, SandboxMode, sizes_folders
from desktop.tools.settings import MAX_TIMEOUT
from desktop.workspace.layout import APP_MANAGED_FILES

if TYPE_CHECKING:
    from desktop.config import Config

OUTPUT_LIMIT = 10_000
_CAPTURE_BYTES = 200_000  # per stream, head and tail each: enough for any capped result
_PIPE_GRACE = 2.0  # seconds to wait for output after the shell exits (background jobs may hold pipes)
_SHELL = "/bin/sh"
_FULL_DISK = 64 * 1024 * 1024  # bytes free below which a disk counts as full
_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "USER", "TMPDIR", "SHELL")
_PROTECTED_NAMES = tuple(Path(name).name for name in APP_MANAGED_FILES)
_HARMLESS_DEVICES = {"/dev/null", "/dev/zero", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",
                     "/dev/random", "/dev/urandom"}
# Words that run the command after them (so "sudo rm -rf /" is checked as rm).
_WRAPPERS = {"sudo", "doas", "env", "nohup", "time", "nice", "ionice", "command", "builtin", "exec", "xargs",
             "stdbuf", "timeout", "if", "elif", "then", "else", "while", "until", "do", "!"}
_PROTECTED_MESSAGE = f"{' and '.join(APP_MANAGED_FILES)} are managed by the app; do not write, move or delete them"
_SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
_FORMATTERS = {"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "parted", "gdisk", "sgdisk"}
_POWER = {"shutdown", "reboot", "poweroff", "halt"}
# A command is one argv string to the shell; Linux refuses longer ones (MAX_ARG_STRLEN, 128 KiB) anyway,
# and the bound keeps the refusal checks below fast.
MAX_COMMAND = 65_536
# Fork bombs: a function that pipes itself into itself. Both patterns anchor at the start of a name, so
# each is linear in the command's length (an unanchored name with a back-reference was quadratic).
_FUNCTION_NAME = re.compile(r"(?<![\w:.])([\w:.]+)\s*\(\s*\)\s*\{")
_SELF_PIPE = re.compile(r"(?<![\w:.])([\w:.]+)\s*\|\s*\1(?![\w:.])")
_MAX_NESTING = 8
_FIND_FILTERS = {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                 "-newer", "-mtime", "-mmin", "-size", "-empty"}
_SEGMENT_BREAK = re.compile(r"^(?:[;&|()`]+|\$)$")  # "$" starts "$(...)"


class ExecTool(Tool):
    """Runs commands through /bin/sh, inside `sandbox` when bubblewrap works here (desktop/tools/sandbox.py),
    under `limits` (desktop/tools/limits.py) either way.

    The sandbox is what contains a command that builds a path at run time (variables, scripts, `python -c`).
    Refusals are the second layer: they parse the command with shlex and catch the common spellings of
    destructive commands. Without the sandbox and with `restrict`, paths that visibly leave the workspace
    (absolute paths, ~, $HOME, ../) are refused too; what a command builds at run time is then not stopped.

    Nothing a command starts outlives its call. In the sandbox the kernel kills its process namespace when
    the shell exits. Without it the shell leads a process group of its own, killed when the shell exits,
    and as root the call's cgroup is emptied as well; a normal user's unsandboxed command that leaves its
    session (setsid, a daemon's double fork) is the one thing that can outlive the call, and its rlimits
    (processor time above all) still bind it."""

    name = "exec"
    approval_title = "Run this command?"
    description = ("Run a shell command in the workspace and return its stdout, stderr and exit code. "
                   "No input is available (stdin is empty). Everything it starts is stopped when it ends, so "
                   "nothing keeps running in the background. Output is capped; long runs time out, and limits "
                   "on processes, memory and file size stop runaways.")
    parameters = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The shell command line."},
            "working_dir": {"type": "string", "minLength": 1,
                            "description": "Folder to run in, relative to the workspace (default: the workspace)."},
            "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT,
                        "description": "Seconds before the command is killed."},
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def __init__(self, workspace: Path, timeout: int, restrict: bool, run_extras: tuple[Path, ...] = (),
                 sandbox: Sandbox | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        self.workspace = workspace.resolve()
        self.sandbox = sandbox
        self.timeout = min(timeout, MAX_TIMEOUT)
        self.restrict = restrict
        self.limits = limits
        # Folders commands may also name with restrict on (skill folders, so their scripts can run).
        self.allowed = (self.workspace, *(p.resolve() for p in run_extras))

    async def execute(self, ctx: ToolContext, command: str,  # type: ignore[override]
                      working_dir: str | None = None, timeout: int | None = None) -> ToolOutput:
        if len(command) > MAX_COMMAND:
            raise ToolError(f"command refused: it is {len(command):,} characters, the limit is {MAX_COMMAND:,}; "
                            "write a long script to a file with write_file and run the file")
        cwd = self._working_dir(working_dir)
        mode = await self.mode()
        if mode.refusal:  # running the command without the sandbox would fail open
            raise ToolError(f"command not run: {mode.refusal}")
        sandbox = self.sandbox if mode.sandboxed else None
        # Visible paths out of the workspace are refused only without the sandbox: inside it they lead to
        # read-only or hidden folders, and refusing `cat /etc/os-release` would only get in the way.
        confine = self.allowed if self.restrict and sandbox is None else None
        # Off the event loop: parsing a long command line takes a while and must not freeze the GUI.
        reason = await asyncio.to_thread(refusal, command, cwd, confine, hard_links=self.restrict)
        if reason:
            raise ToolError(f"command refused: {reason}")
        timeout = timeout or self.timeout
        call = await self.limits.for_call(sandbox.program if sandbox else None, timeout)
        tail = LiveTail(ctx)
        try:
            argv = call.command([_SHELL, "-c", command])
            if sandbox is None:
                return await self._run(call.launch(argv), cwd, timeout, tail.feed, call)
            async with sandbox.command(argv, cwd, folder_mb=call.limits.memory_mb) as contained:
                call.memory_folders = sizes_folders(contained)
                return await self._run(call.launch(contained), cwd, timeout, tail.feed, call)
        finally:
            tail.close()
            await call.close()

    async def mode(self) -> SandboxMode:
        """How commands are contained here, in words (doctor and Settings show it)."""
        return RESTRICTION_OFF if self.sandbox is None else await self.sandbox.mode()

    async def needs_approval(self, config: Config, arguments: dict[str, Any]) -> str | None:
        """The sandbox contains a command; where bubblewrap does not run, the person says yes. Nobody is asked
        about a command that will not run (`refusal`): it ends saying why."""
        mode = await self.mode()
        return None if mode.sandboxed or mode.refusal else f"commands are {mode.description}"

    def shown(self, arguments: dict[str, Any]) -> str:
        return str(arguments.get("command", ""))

    def _working_dir(self, raw: str | None) -> Path:
        if not raw:
            return self.workspace
        path = Path(raw).expanduser()
        path = (path if path.is_absolute() else self.workspace / path).resolve()
        if self.restrict and not inside(path, self.workspace):
            raise ToolError(f"working_dir {raw} is outside the workspace {self.workspace}")
        if not path.is_dir():
            raise ToolError(f"working_dir {raw} is not an existing folder")
        return path

    async def _run(self, argv: list[str], cwd: Path, timeout: int, on_output: Callable[[bytes], None],
                   call: CallLimits) -> str:
        # Shielded: cancelling asyncio's own spawn kills only the shell and then waits for its pipes,
        # which the shell's children still hold open (a /stop right after start would hang until they exit).
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv, cwd=cwd, env=child_environment(), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True))
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(OSError):
                await _stop(await spawn, call)
            raise
        except OSError as exc:
            raise ToolError(f"could not start the shell: {exc}") from None
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Capture(on_output), _Capture(on_output)
        readers = [asyncio.create_task(out.drain(proc.stdout)), asyncio.create_task(err.drain(proc.stderr))]
        try:
            if not await _exited(proc, readers, timeout):
                await call.note_timeout(proc.pid)
                await _stop(proc, call)
                await asyncio.wait(readers, timeout=_PIPE_GRACE)
                output = out.text() + "\n" + err.text()
                stopped = call.stopped(None, output, await _disk_full(cwd, output))
                what = (f"stopped: {stopped}, and killed at the {timeout} s timeout" if stopped else
                        f"command timed out after {timeout} s and was killed")
                raise ToolError(f"{what} (with every process it started). Output so far:\n"
                                f"{_report(out, err, None)}") from None
            await _stop(proc, call)  # what it left running in the background ends with it
            _, pending = await asyncio.wait(readers, timeout=_PIPE_GRACE)
            note = ("\n(processes that left the command's session still hold the output open; their later "
                    "output is not shown)" if pending else "")
            output = out.text() + "\n" + err.text()
            stopped = call.stopped(proc.returncode, output, await _disk_full(cwd, output))
            if stopped and proc.returncode != 0:
                raise ToolError(f"stopped: {stopped}. Output:\n{_report(out, err, proc.returncode)}{note}")
            if stopped:  # it went on and succeeded: say what was cut short, as part of its result
                note += f"\n(a limit stopped part of it: {stopped})"
            return _report(out, err, proc.returncode) + note
        finally:
            if proc.returncode is None:  # cancelled (/stop): leave nothing running
                await _stop(proc, call)
            for reader in readers:
                reader.cancel()


async def _disk_full(cwd: Path, output: str) -> bool:
    """Whether the disk under `cwd` is all but full, once a command said a write found no room: then that may
    be why, rather than a full private folder of the sandbox."""
    if NO_SPACE not in output:
        return False
    try:
        return (await asyncio.to_thread(shutil.disk_usage, cwd)).free < _FULL_DISK
    except OSError:
        return True


def child_environment() -> dict[str, str]:
    """Only what commands need to behave normally; API keys and other secrets in our environment stay here."""
    env = {key: os.environ[key] for key in _ENV_KEYS if key in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env["TERM"] = "dumb"  # no colour codes or pagers: the output is read by a model
    return env


class _Capture:
    """Keeps the head and tail of a stream so a chatty command cannot fill memory."""

    def __init__(self, on_output: Callable[[bytes], None]) -> None:
        self.on_output = on_output  # every chunk as it comes, for the live tail
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.on_output(chunk)
            room = _CAPTURE_BYTES - len(self.head)
            self.head += chunk[:room]
            self.tail += chunk[room:] if room > 0 else chunk
            if len(self.tail) > _CAPTURE_BYTES:
                excess = len(self.tail) - _CAPTURE_BYTES
                del self.tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        gap = f"\n... [{self.dropped} bytes omitted] ...\n" if self.dropped else ""
        return (self.head.decode("utf-8", "replace") + gap + self.tail.decode("utf-8", "replace")).rstrip("\n")


def _report(out: _Capture, err: _Capture, code: int | None) -> str:
    parts = []
    if stdout := out.text():
        parts.append(stdout)
    if stderr := err.text():
        parts.append(f"STDERR:\n{stderr}")
    if not parts:
        parts.append("(no output)")
    if code is not None:
        parts.append(f"Exit code: {code}")
    return cap_text("\n".join(parts), OUTPUT_LIMIT)


async def _exited(proc: asyncio.subprocess.Process, readers: list[asyncio.Task[None]], timeout: float) -> bool:
    """Wait for the shell to exit; False on timeout. Process.wait() alone would also wait for every
    background job still holding the output pipes, so the exit status is checked while the pipes are open."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while proc.returncode is None:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        if all(reader.done() for reader in readers):
            try:
                async with asyncio.timeout(remaining):
                    await proc.wait()
            except TimeoutError:
                return False
        else:
            await asyncio.wait(readers, timeout=min(remaining, 0.2))
    return True


async def _stop(proc: asyncio.subprocess.Process, call: CallLimits) -> None:
    """Kill the shell and everything in its session (start_new_session made it a process group) and in
    its cgroup, if it has one."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    await call.stop_all()
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(_PIPE_GRACE):
            await proc.wait()


# --- refusals -----------------------------------------------------------------------------------------

def refusal(command: str, cwd: Path, workspace: tuple[Path, ...] | None, *, hard_links: bool = False,
            depth: int = 0) -> str | None:
    """Why `command` must not run, or None. `workspace` set means paths must stay inside those folders
    (the workspace first); `hard_links` refuses files named in the command that have more than one name
    (a hard link in the workspace may be a file outside it). `depth` counts the inline scripts (sh -c,
    eval) this one is nested in."""
    if depth > _MAX_NESTING:
        return f"scripts nested more than {_MAX_NESTING} deep (sh -c, eval) cannot be checked"
    if _is_fork_bomb(command):
        return "it looks like a fork bomb"
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to plain splitting, still checked
        tokens = command.split()
    for segment in _segments(tokens):
        reason = _segment_refusal(segment, cwd, workspace, hard_links, depth)
        if reason:
            return reason
    return None


def _is_fork_bomb(command: str) -> bool:
    defined = {m.group(1) for m in _FUNCTION_NAME.finditer(command)}
    return bool(defined) and any(m.group(1) in defined for m in _SELF_PIPE.finditer(command))


def _segments(tokens: list[str]) -> list[list[str]]:
    segments: list[list[str]] = [[]]
    for token in tokens:
        if _SEGMENT_BREAK.match(token):
            segments.append([])
            continue
        if token.startswith("`"):  # `command substitution` is a command of its own
            segments.append([])
        segments[-1].append(token.strip("`"))
        if token.endswith("`"):
            segments.append([])
    return [s for s in segments if s]


def _segment_refusal(segment: list[str], cwd: Path, workspace: tuple[Path, ...] | None, hard_links: bool,
                     depth: int) -> str | None:
    words = _command_words(segment)
    if words:
        name = os.path.basename(words[0])
        args = words[1:]
        if name in _SHELLS or name == "eval":
            inner = _inline_script(name, args)
            if inner is not None:
                return refusal(inner, cwd, workspace, hard_links=hard_links, depth=depth + 1)
        reason = _dangerous(name, args)
        if reason:
            return reason
    reason = (_redirect_refusal(segment) or _touches_protected(words)
              or (_hard_linked(segment, cwd) if hard_links else None))
    if reason:
        return reason
    if workspace is not None:
        return _escapes(segment, words, cwd, workspace)
    return None


def _command_words(segment: list[str]) -> list[str]:
    """The command and its arguments, past redirections, VAR=value prefixes and wrappers like sudo."""
    words: list[str] = []
    skip_next = False
    for token in segment:
        if skip_next:
            skip_next = False
            continue
        if _is_redirect(token):
            skip_next = True
            continue
        if token.isdigit() and not words:  # the "2" of "2>file"
            continue
        words.append(token)
    while words:
        first = words[0]
        if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", first):
            words.pop(0)
        elif os.path.basename(first) in _WRAPPERS:
            words.pop(0)
            while words and (words[0].startswith("-") or re.match(r"^\d+[smhd]?$", words[0])):
                words.pop(0)
        else:
            break
    return words


def _inline_script(name: str, args: list[str]) -> str | None:
    if name == "eval":
        return " ".join(args)
    for i, arg in enumerate(args):
        if arg.startswith("-") and "c" in arg[1:] and not arg.startswith("--") and i + 1 < len(args):
            return args[i + 1]
    return None


def _dangerous(name: str, args: list[str]) -> str | None:
    if name == "rm":
        recursive = any(a == "--recursive" or (a.startswith("-") and not a.startswith("--") and
                                                ("r" in a or "R" in a)) for a in args)
        if "--no-preserve-root" in args:
            return "rm --no-preserve-root is never run"
        targets = [a for a in args if not a.startswith("-")]
        broad = [t for t in targets if _is_broad(t)]
        if recursive and broad:
            return (f"recursive delete of a broad path ({broad[0]}) is not allowed; "
                    "delete specific files or folders instead")
    if name == "find" and (reason := _find_deletes_broadly(args)):
        return reason
    if name.startswith("mkfs") or name in _FORMATTERS:
        return f"{name} formats or repartitions disks and is never run"
    if name == "dd" and any(_is_device(a[3:]) for a in args if a.startswith("of=")):
        return "dd to a device is not allowed"
    if name in _POWER or (name == "systemctl" and any(a in ("poweroff", "reboot", "halt", "kexec") for a in args)) \
            or (name in ("init", "telinit") and args[:1] in (["0"], ["6"])):
        return "shutting down or rebooting the computer is not allowed"
    return None


def _find_deletes_broadly(args: list[str]) -> str | None:
    """find that deletes (-delete, -exec rm) from /, home, . or .. with nothing narrowing what it matches."""
    runs_rm = any(a in ("-exec", "-execdir", "-ok", "-okdir") and os.path.basename(b) in ("rm", "shred", "unlink")
                  for a, b in zip(args, args[1:], strict=False))
    if "-delete" not in args and not runs_rm:
        return None
    starts = list(itertools.takewhile(lambda a: not a.startswith(("-", "(", "!")), args)) or ["."]
    broad = [s for s in starts if _is_broad(s)]
    narrowed = any(a in _FIND_FILTERS for a in args)
    if broad and (not narrowed or any(s.rstrip("/") not in (".", "") for s in broad if s != "/") or "/" in broad):
        return (f"find deleting under a broad path ({broad[0]}) is not allowed; "
                "narrow it (-name ...) to what should go")
    return None


def _is_broad(target: str) -> bool:
    """True for /, top-level folders, the home folder (or a parent of it), ~, $HOME, *, . and .."""
    t = target
    while t.endswith(("/*", "/")) and len(t) > 1:
        t = t[:-2] if t.endswith("/*") else t[:-1]
    if t in ("", "/", "*", ".", "..", ".*", "~", "$HOME", "${HOME}") or re.fullmatch(r"(\.\./)*\.\.", t):
        return True
    if t.startswith(("~", "$HOME", "${HOME}")):
        return False  # something below home: a specific folder
    if t.startswith("/"):
        path = Path(os.path.normpath(t))
        return len(path.parts) <= 2 or path == Path.home() or path in Path.home().parents
    return False


def _is_device(path: str) -> bool:
    return path.startswith("/dev/") and path not in _HARMLESS_DEVICES


def _is_redirect(token: str) -> bool:
    return bool(re.fullmatch(r"&?[<>]+[|&]?", token))


def _redirect_refusal(segment: list[str]) -> str | None:
    for i, token in enumerate(segment[:-1]):
        if _is_redirect(token) and ">" in token:
            if _is_protected(segment[i + 1]):
                return _PROTECTED_MESSAGE
            if _is_device(segment[i + 1]):
                return "writing to a device is not allowed"
    return None


def _is_protected(token: str) -> bool:
    return any(name in token for name in _PROTECTED_NAMES)


def _touches_protected(words: list[str]) -> str | None:
    """Writes, moves or deletes of the memory history files (reading them, e.g. with grep, is fine)."""
    if not words:
        return None
    name, args = os.path.basename(words[0]), words[1:]
    in_place = name in ("sed", "perl") and any((a.startswith("-") and not a.startswith("--") and "i" in a)
                                               or a.startswith("--in-place") for a in args)
    writes = (name in ("rm", "mv", "truncate", "shred", "tee", "unlink", "ln") or in_place) and \
        any(_is_protected(a) for a in args)
    copies_onto = name in ("cp", "install", "rsync") and bool(args) and _is_protected(args[-1])
    dd_onto = name == "dd" and any(a.startswith("of=") and _is_protected(a) for a in args)
    return _PROTECTED_MESSAGE if writes or copies_onto or dd_onto else None


def _hard_linked(segment: list[str], cwd: Path) -> str | None:
    for token in segment:
        try:
            info = (cwd / token).lstat() if token and "\x00" not in token else None
        except (OSError, ValueError):
            continue
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            return (f"{token} is a hard link: the same file also lives elsewhere, maybe outside the workspace; "
                    "copy it first if it belongs here")
    return None


def _escapes(segment: list[str], words: list[str], cwd: Path, workspace: tuple[Path, ...]) -> str | None:
    """With restrict on: refuse visible references to paths outside the workspace (best effort)."""
    if words and words[0] == "cd" and len(words) == 1:
        return "cd without a folder goes to the home folder, outside the workspace"
    command_word = words[0] if words else None
    for token in segment:
        if command_word is not None and token == command_word:
            command_word = None  # the program itself may live anywhere (/usr/bin/python3)
            continue
        if _is_redirect(token):
            continue
        for candidate in filter(None, (token, token.partition("=")[2])):
            path = _as_path(candidate, cwd)
            if (path is not None and not any(inside(path, root) for root in workspace)
                    and str(path) not in _HARMLESS_DEVICES):
                return (f"{candidate} is outside the workspace {workspace[0]} "
                        "(commands are restricted to the workspace)")
    return None


def _as_path(token: str, cwd: Path) -> Path | None:
    """The filesystem path a token visibly names, or None when it does not look like one."""
    home = str(Path.home())
    for prefix in ("${HOME}", "$HOME", "~"):
        if token == prefix or token.startswith(prefix + "/"):
            token = home + token[len(prefix):]
            break
    try:
        if token.startswith("/"):
            top = Path("/", *Path(token).parts[1:2])
            # "/api/v1" in a grep pattern is not a path on this machine
            return Path(token).resolve() if top.exists() else None
        candidate = cwd / token
        if ".." in Path(token).parts or os.path.lexists(candidate):  # lexists: a symlink may lead out
            return candidate.resolve()
    except (OSError, RuntimeError, ValueError):  # too long, a symlink loop, a NUL byte: not a usable path
        return None
    return None


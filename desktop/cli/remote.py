"""The command line as a thin client of the running tray app, over the app's single-instance socket.

Why: a headless command that starts its own core pays for litellm's import (seconds, ~250 MB) and works
beside the app's sessions and memory instead of with them. When the app runs, `nanobot-tray agent -m hi`
hands its argv to the app and prints what comes back; the client imports neither Qt nor litellm (stdlib,
platformdirs and this module only), so it answers in milliseconds. Without a running app, with
`--standalone`, on Windows (Qt uses a named pipe there) or when the app speaks another protocol version,
the command runs in-process as before.

Forwarding a subcommand (the one way): give its parser `serve=` beside `func=` —
`parser.set_defaults(func=run, serve=serve)` with `def serve(args, core, out) -> Awaitable[int] | None` —
and add `--standalone` with `add_standalone(parser)`. The app parses the forwarded argv with the same
parser and calls `serve` with its own running core and an `Output` whose lines go back to the client;
returning None (e.g. an interactive chat, which needs this terminal) makes the client run the command
in-process. Write the command's body once against `Output` and let `func` call it with `Terminal()`.

Protocol (one JSON object per line, over a Unix socket private to the user: the runtime directory is 0700,
or Qt's user-only socket permissions, and the client checks the socket's owner):
    client → {"action": "run", "protocol": 2, "argv": [...]}
    app    → {"protocol": 2, "ok": true}                      accepted; then
             {"out": TEXT} | {"err": TEXT} ...                 what the command prints, as it happens
             {"alive": true}                                   every ALIVE_EVERY s while it runs
             {"exit": CODE}                                    last line
    or     → {"protocol": 2, "ok": false, "local": true}       run it yourself
    or     → {"protocol": N, "ok": false, "error": TEXT}       another version: the client runs in-process
An app too old to know "run" answers {"ok": true} without "protocol"; that counts as another version too.
The quick prompt is one line each way: client → {"action": "quick", "protocol": 2, "text": TEXT}, app →
{"ok": true} (shown), or {"protocol": N, "ok": false, "error": TEXT} when the versions differ;
then the client asks through Qt's socket like a second launch of the app, which every version understands.
The client hanging up (Ctrl+C) cancels the command in the app.
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from desktop.kernel.paths import Home, home

PROTOCOL = 2  # 2: the app says it is alive while a command runs
CONNECT_TIMEOUT = 0.5  # seconds; a live app accepts at once
HEADER_TIMEOUT = 5.0  # the app parses argv and decides before it answers
ALIVE_EVERY = 15.0  # a turn may take minutes; a line this often says the app is still at it
SILENT_LIMIT = 4 * ALIVE_EVERY  # no line for this long: the app is stuck, not busy
STANDALONE = "--standalone"


class Output(Protocol):
    """Where a command's text goes: this terminal, or the client on the other end of the socket."""

    def out(self, text: str, end: str = "\n") -> None: ...

    def err(self, text: str, end: str = "\n") -> None: ...


class Terminal:
    """Output of a command running in this process."""

    def out(self, text: str, end: str = "\n") -> None:
        print(text, end=end, flush=True)

    def err(self, text: str, end: str = "\n") -> None:
        print(text, end=end, file=sys.stderr, flush=True)


class Forwarded:
    """Output of a command running in the app on a client's behalf: each write is one protocol line."""

    def __init__(self, send: Callable[[dict[str, Any]], None]) -> None:
        self._send = send

    def out(self, text: str, end: str = "\n") -> None:
        self._send({"out": text + end})

    def err(self, text: str, end: str = "\n") -> None:
        self._send({"err": text + end})


def add_standalone(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(STANDALONE, action="store_true",
                        help="run in this process even when the tray app is running")


def socket_name(h: Home) -> str:
    """The app's QLocalServer name: per user and per home (tests with their own NANOBOT_TRAY_HOME never
    meet the real app); an absolute path in the user's private runtime directory on Linux."""
    user = str(os.getuid()) if hasattr(os, "getuid") else getpass.getuser()
    digest = hashlib.sha256(str(h.config_file).encode()).hexdigest()[:12]
    name = f"nanobot-tray-{user}-{digest}"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if sys.platform.startswith("linux") and runtime and os.path.isdir(runtime):
        return os.path.join(runtime, name)  # private to the user, unlike /tmp
    return name


def socket_path(name: str) -> str:
    """Where Qt puts a local server of this name on Unix: the name itself when absolute, else in QDir::tempPath()."""
    if os.path.isabs(name):
        return name
    return os.path.join((os.environ.get("TMPDIR") or "/tmp").rstrip("/") or "/", name)


def _connect(path: str) -> socket.socket | None:
    """A connection to the app, or None when none runs here. Someone else's socket is never used."""
    try:
        if os.stat(path).st_uid != os.getuid():
            print(f"nanobot-tray: ignoring {path}: it belongs to another user", file=sys.stderr)
            return None
    except OSError:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    return sock


def _lines(sock: socket.socket) -> Iterator[dict[str, Any]]:
    """The app's reply lines as dicts, until it hangs up."""
    buffer = b""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            try:
                item = json.loads(line)
            except ValueError:
                item = None
            yield item if isinstance(item, dict) else {}
        chunk = sock.recv(65536)
        if not chunk:
            return
        buffer += chunk


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _request(name: str, message: dict[str, Any]) -> tuple[socket.socket, Iterator[dict[str, Any]]] | None:
    """Send one request; the socket and its reply lines, or None when no app answers."""
    if sys.platform == "win32" or not hasattr(socket, "AF_UNIX"):
        return None  # Qt's local server is a named pipe there
    sock = _connect(socket_path(name))
    if sock is None:
        return None
    try:
        _send(sock, message)
    except OSError:
        sock.close()
        return None
    sock.settimeout(HEADER_TIMEOUT)
    return sock, _lines(sock)


def forward(argv: list[str], name: str | None = None) -> int | None:
    """Run `argv` in the running app and return its exit code; None: run it in this process instead."""
    if not argv or argv[0].startswith("-") or STANDALONE in argv or "-h" in argv or "--help" in argv:
        return None
    opened = _request(name or socket_name(home()), {"action": "run", "protocol": PROTOCOL, "argv": argv,
                                                    "cwd": os.getcwd()})  # where the argv's file names start
    if opened is None:
        return None
    sock, lines = opened
    with sock:
        try:
            header = next(lines, {})
        except OSError:  # timed out or reset: the app is busy starting or stuck
            print("nanobot-tray: the running app did not answer; running here instead", file=sys.stderr)
            return None
        if header.get("protocol") != PROTOCOL:
            print(f"nanobot-tray: the running app speaks another protocol ({header.get('protocol', 'none')}, "
                  f"this command speaks {PROTOCOL}); running here instead. Restart the app after an update.",
                  file=sys.stderr)
            return None
        if not header.get("ok"):
            return None
        sock.settimeout(SILENT_LIMIT)  # a turn takes as long as the model does, but the app says it is alive
        try:
            return _relay(lines)
        except KeyboardInterrupt:
            return 130
        except BrokenPipeError:  # this command's own output was closed (`| head -1`), not the app's connection
            raise
        except TimeoutError:
            print(f"\nnanobot-tray: the running app stopped answering (nothing for {SILENT_LIMIT:.0f} s); "
                  "is it stuck? Quit it from the tray, or run with --standalone", file=sys.stderr)
            return 1
        except OSError as exc:
            print(f"\nnanobot-tray: lost the connection to the app: {exc}", file=sys.stderr)
            return 1


def _relay(lines: Iterator[dict[str, Any]]) -> int:
    for item in lines:
        if "out" in item:
            sys.stdout.write(str(item["out"]))
            sys.stdout.flush()
        elif "err" in item:
            sys.stderr.write(str(item["err"]))
            sys.stderr.flush()
        elif "exit" in item:
            return int(item["exit"]) if isinstance(item["exit"], int) else 1
    print("\nnanobot-tray: the app closed the connection before the command finished (did it quit?)",
          file=sys.stderr)
    return 1


def open_quick(argv: list[str], name: str | None = None) -> bool:
    """`nanobot-tray --quick [TEXT]` with the app running: show its quick prompt without loading Qt here."""
    if not argv or argv[0] != "--quick" or len(argv) > 2:
        return False
    text = argv[1] if len(argv) == 2 else ""
    opened = _request(name or socket_name(home()), {"action": "quick", "protocol": PROTOCOL, "text": text})
    if opened is None:
        return False
    sock, lines = opened
    with sock:
        try:
            reply = next(lines, {})
        except OSError:
            return False
    if reply.get("ok"):
        return True  # shown; an app from before versioning says ok without "protocol" and shows it too
    if reply.get("protocol", PROTOCOL) != PROTOCOL:
        print(f"nanobot-tray: the running app speaks another protocol ({reply['protocol']}, this command speaks "
              f"{PROTOCOL}); asking it the old way. Restart the app after an update.", file=sys.stderr)
    return False

"""One running app per user and home: a later launch hands its request to the running one and exits.

Protocol: the client sends one JSON line (`{"action": "show" | "quick" | "status", ...}`) and the server
answers one JSON line (`{"ok": true, ...}`) before it acts, so a second launch returns at once. A request
naming another protocol version is refused (`"ok": false` with the app's "protocol"); one naming none (a
second launch of the app) is served. The "run" action (a forwarded command line) keeps the connection open
and streams: see desktop/cli/remote.py."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from desktop.cli.remote import ALIVE_EVERY, PROTOCOL, socket_name
from desktop.kernel.paths import Home
from desktop.kernel.taskset import TaskSet

# Given a "run" request and a way to send lines back: the command to run, or None to let the client run it.
Runner = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], Awaitable[int] | None]

log = logging.getLogger(__name__)

CONNECT_MS = 500
REPLY_MS = 3000


class InstanceUnresponsive(RuntimeError):
    """An app instance holds the socket but did not answer."""


def server_name(h: Home) -> str:
    """Per user and per home; the thin client (desktop/cli/remote.py) computes the same name without Qt."""
    return socket_name(h)


def send_to_running(name: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """Deliver `message` to the running instance and return its reply; None when no instance runs.

    Blocking on purpose: it runs before any window or event loop exists."""
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(CONNECT_MS):
        return None
    sock.write(json.dumps(message).encode() + b"\n")
    sock.flush()
    data = b""
    while b"\n" not in data:
        if not sock.waitForReadyRead(REPLY_MS):
            sock.abort()
            raise InstanceUnresponsive("nanobot-tray is already running but did not answer within "
                                       f"{REPLY_MS / 1000:.0f} s; quit it from the tray (or end the process) "
                                       "and start it again")
        data += bytes(sock.readAll().data())
    sock.disconnectFromServer()
    try:
        reply = json.loads(data.split(b"\n", 1)[0])
    except ValueError:
        reply = {"ok": False, "error": "unreadable reply"}
    return reply if isinstance(reply, dict) else {"ok": False, "error": "unreadable reply"}


def _answers(name: str) -> bool:
    probe = QLocalSocket()
    probe.connectToServer(name)
    alive = probe.waitForConnected(CONNECT_MS)
    probe.abort()
    return alive


class InstanceServer(QObject):
    """Listens for later launches. `received` carries each request once it has been acknowledged."""

    received = Signal(dict)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        if not os.path.isabs(name):  # outside the private runtime dir: restrict the socket to this user
            self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}
        self.status: Callable[[], dict[str, Any]] = dict  # extra fields for "status" replies
        self.runner: Runner | None = None  # set once the app can run forwarded commands
        self._runs = TaskSet("forwarded commands")

    def listen(self) -> bool:
        """Start listening; False when another live instance owns the name. A stale socket is removed.

        Asks first: with socket options set, Qt on Unix replaces an existing socket file instead of failing."""
        if _answers(self.name):
            return False
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)  # nobody answered: left behind by a crashed instance
        if self._server.listen(self.name):
            return True
        log.error("cannot listen on %s: %s; later launches will start their own instance",
                  self.name, self._server.errorString())
        return True

    def close(self) -> None:
        self._server.close()

    async def stop_runs(self) -> None:
        """Quitting: forwarded commands end (their clients see the connection close)."""
        await self._runs.cancel_all(grace=1.0)

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            self._buffers[sock] = b""
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(lambda s=sock: self._drop(s))

    def _drop(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        sock.deleteLater()

    def _read(self, sock: QLocalSocket) -> None:
        data = self._buffers.get(sock, b"") + bytes(sock.readAll().data())
        if b"\n" not in data:
            self._buffers[sock] = data
            return
        line = data.split(b"\n", 1)[0]
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise ValueError("not an object")
        except ValueError:
            log.warning("ignored an unreadable request on the instance socket: %r", line[:200])
            self._reply(sock, {"ok": False, "error": "unreadable request"})
            return
        if message.get("action") == "run":
            self._run(sock, message)
            return
        if message.get("protocol", PROTOCOL) != PROTOCOL:  # none: a second launch of the app itself
            self._reply(sock, {"protocol": PROTOCOL, "ok": False, "error": f"this app speaks protocol {PROTOCOL}"})
            return
        extra = self.status() if message.get("action") == "status" else {}
        self._reply(sock, {"ok": True, **extra})
        self.received.emit(message)

    def _reply(self, sock: QLocalSocket, reply: dict[str, Any]) -> None:
        self._buffers.pop(sock, None)
        sock.write(json.dumps(reply).encode() + b"\n")
        sock.flush()
        sock.disconnectFromServer()

    def _run(self, sock: QLocalSocket, message: dict[str, Any]) -> None:
        """A forwarded command: a header line, then its output as it happens, then its exit code."""
        self._buffers.pop(sock, None)
        if message.get("protocol") != PROTOCOL:
            self._reply(sock, {"protocol": PROTOCOL, "ok": False,
                               "error": f"this app speaks protocol {PROTOCOL}"})
            return
        open_ = [True]
        sock.disconnected.connect(lambda: open_.__setitem__(0, False))

        def send(line: dict[str, Any]) -> None:
            if open_[0]:
                sock.write(json.dumps(line).encode() + b"\n")
                sock.flush()

        job = self.runner(message, send) if self.runner is not None else None
        if job is None:
            self._reply(sock, {"protocol": PROTOCOL, "ok": False, "local": True})
            return
        send({"protocol": PROTOCOL, "ok": True})
        task = self._runs.spawn(self._finish(job, send))
        sock.disconnected.connect(task.cancel)  # the client hung up (Ctrl+C): stop working for it
        task.add_done_callback(lambda _t: sock.disconnectFromServer() if open_[0] else None)

    async def _finish(self, job: Awaitable[int], send: Callable[[dict[str, Any]], None]) -> None:
        running = asyncio.ensure_future(job)
        try:
            while not running.done():  # a line now and then, so the client can tell a long turn from a stuck app
                await asyncio.wait([running], timeout=ALIVE_EVERY)
                if not running.done():
                    send({"alive": True})
            code = running.result()
        except Exception as exc:  # the app stays up; the client learns what happened
            log.exception("a forwarded command failed")
            send({"err": f"error: {type(exc).__name__}: {exc}\n"})
            code = 1
        finally:
            running.cancel()  # the client hung up: this task is cancelled, and the command with it
        send({"exit": code})

"""D-Bus services played by tests: a bus of the test's own (a real dbus-daemon) and a base for a stand-in that
owns a well-known name on it and answers calls on a thread of its own (the Screenshot portal, logind)."""

from __future__ import annotations

import contextlib
import select
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.e2e.xdesktop import DIE_WITH_US


@contextlib.contextmanager
def private_bus(root: Path) -> Iterator[str]:
    """A bus at an address of its own (yielded); it is killed when the block ends, and by the kernel if this
    process dies first."""
    daemon = subprocess.Popen([*DIE_WITH_US, "dbus-daemon", "--session", "--nofork", "--print-address=1",
                               f"--address=unix:path={root / 'bus'}"], stdout=subprocess.PIPE, text=True)
    try:
        assert daemon.stdout is not None
        ready, _, _ = select.select([daemon.stdout], [], [], 20)
        assert ready, "dbus-daemon said nothing for 20 s"
        yield daemon.stdout.readline().strip()
    finally:
        daemon.kill()
        daemon.wait(10)


class StandIn:
    """Owns `name` on the bus at `address` and hands each method call to `answer` on its own thread until
    `close`. `fds`: the connection may pass file descriptors."""

    def __init__(self, address: str, name: str, fds: bool = False) -> None:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        self.conn = open_dbus_connection(address, enable_fds=fds)
        self.conn.send_and_get_reply(message_bus.RequestName(name), timeout=10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def answer(self, msg: Any) -> None:
        raise NotImplementedError

    def reply(self, msg: Any, signature: str, body: tuple[Any, ...]) -> None:
        from jeepney import new_method_return

        self.conn.send(new_method_return(msg, signature, body))

    def _serve(self) -> None:
        from jeepney import MessageType

        while not self._stop.is_set():
            try:
                msg = self.conn.receive(timeout=0.05)
            except TimeoutError:
                continue
            if msg.header.message_type is MessageType.method_call:
                self.answer(msg)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.conn.close()

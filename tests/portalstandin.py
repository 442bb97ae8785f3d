"""A private session bus (a real dbus-daemon of the test's own) and, on it, a stand-in for xdg-desktop-portal's
Screenshot interface that plays the person at the portal's dialog: it takes the picture (writes a PNG and
answers with its file:// URI), cancels, or never answers.

It answers as early as a real portal may: the Response signal goes out before the call's reply, so a caller
that listens only once the reply is in misses it (the race the portal's documentation warns about). It
broadcasts the signal, so a caller must also have asked the bus for it."""

from __future__ import annotations

import contextlib
import select
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.e2e.xdesktop import DIE_WITH_US

PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"


@contextlib.contextmanager
def private_bus(root: Path) -> Iterator[str]:
    """A session bus at an address of its own (yielded); it is killed when the block ends, and by the kernel
    if this process dies first."""
    daemon = subprocess.Popen([*DIE_WITH_US, "dbus-daemon", "--session", "--nofork", "--print-address=1",
                               f"--address=unix:path={root / 'session_bus'}"], stdout=subprocess.PIPE, text=True)
    try:
        assert daemon.stdout is not None
        ready, _, _ = select.select([daemon.stdout], [], [], 20)
        assert ready, "dbus-daemon said nothing for 20 s"
        yield daemon.stdout.readline().strip()
    finally:
        daemon.kill()
        daemon.wait(10)


class ScreenshotPortal:
    """`answer`: "ok" (a picture of `picture`'s bytes), "cancel", "fail" or "never". `asked` holds the options
    of each Screenshot call, `closed` the request paths a caller asked to close."""

    def __init__(self, address: str, folder: Path, picture: bytes, answer: str = "ok") -> None:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import open_dbus_connection

        self.folder, self.picture, self.answer = folder, picture, answer
        self.asked: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.written: list[Path] = []
        self.conn = open_dbus_connection(address)
        self.conn.send_and_get_reply(message_bus.RequestName(PORTAL_NAME), timeout=10)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        from jeepney import HeaderFields, MessageType

        while not self._stop.is_set():
            try:
                msg = self.conn.receive(timeout=0.05)
            except TimeoutError:
                continue
            if msg.header.message_type is not MessageType.method_call:
                continue
            fields = msg.header.fields
            call = (fields.get(HeaderFields.interface), fields.get(HeaderFields.member))
            if call == (SCREENSHOT, "Screenshot"):
                self._screenshot(msg)
            elif call == ("org.freedesktop.DBus.Properties", "Get") and tuple(msg.body) == (SCREENSHOT, "version"):
                self._reply(msg, "v", (("u", 2),))
            elif call == (REQUEST, "Close"):
                self.closed.append(str(fields.get(HeaderFields.path)))
                self._reply(msg, "", ())
            else:
                from jeepney import new_error

                self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("not here",)))

    def _screenshot(self, msg: Any) -> None:
        from jeepney import DBusAddress, HeaderFields, new_signal

        _parent, options = msg.body
        self.asked.append({key: value for key, (_sig, value) in options.items()})
        sender = str(msg.header.fields.get(HeaderFields.sender)).lstrip(":").replace(".", "_")
        handle = f"{PORTAL_PATH}/request/{sender}/{options['handle_token'][1]}"
        request = DBusAddress(handle, interface=REQUEST)
        if self.answer == "ok":
            written = self.folder / f"Screenshot from call {len(self.asked)}.png"  # a space: the URI quotes it
            written.write_bytes(self.picture)
            self.written.append(written)
            self.conn.send(new_signal(request, "Response", "ua{sv}", (0, {"uri": ("s", _uri(written))})))
        elif self.answer in ("cancel", "fail"):
            self.conn.send(new_signal(request, "Response", "ua{sv}", (1 if self.answer == "cancel" else 2, {})))
        self._reply(msg, "o", (handle,))

    def _reply(self, msg: Any, signature: str, body: tuple[Any, ...]) -> None:
        from jeepney import new_method_return

        self.conn.send(new_method_return(msg, signature, body))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.conn.close()


def _uri(path: Path) -> str:
    return "file://" + quote(str(path))

"""On a private session bus (tests/busstandin.py), a stand-in for xdg-desktop-portal's
Screenshot interface that plays the person at the portal's dialog: it takes the picture (writes a PNG and
answers with its file:// URI), cancels, or never answers.

It answers as early as a real portal may: the Response signal goes out before the call's reply, so a caller
that listens only once the reply is in misses it (the race the portal's documentation warns about). It
broadcasts the signal, so a caller must also have asked the bus for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.busstandin import StandIn

PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"


class ScreenshotPortal(StandIn):
    """`answer`: "ok" (a picture of `picture`'s bytes), "cancel", "fail" or "never". `asked` holds the options
    of each Screenshot call, `closed` the request paths a caller asked to close."""

    def __init__(self, address: str, folder: Path, picture: bytes, answer: str = "ok") -> None:
        self.folder, self.picture, self.answer_with = folder, picture, answer
        self.asked: list[dict[str, Any]] = []
        self.closed: list[str] = []
        self.written: list[Path] = []
        super().__init__(address, PORTAL_NAME)

    def answer(self, msg: Any) -> None:
        from jeepney import HeaderFields, new_error

        fields = msg.header.fields
        call = (fields.get(HeaderFields.interface), fields.get(HeaderFields.member))
        if call == (SCREENSHOT, "Screenshot"):
            self._screenshot(msg)
        elif call == ("org.freedesktop.DBus.Properties", "Get") and tuple(msg.body) == (SCREENSHOT, "version"):
            self.reply(msg, "v", (("u", 2),))
        elif call == (REQUEST, "Close"):
            self.closed.append(str(fields.get(HeaderFields.path)))
            self.reply(msg, "", ())
        else:
            self.conn.send(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("not here",)))

    def _screenshot(self, msg: Any) -> None:
        from jeepney import DBusAddress, HeaderFields, new_signal

        _parent, options = msg.body
        self.asked.append({key: value for key, (_sig, value) in options.items()})
        sender = str(msg.header.fields.get(HeaderFields.sender)).lstrip(":").replace(".", "_")
        handle = f"{PORTAL_PATH}/request/{sender}/{options['handle_token'][1]}"
        request = DBusAddress(handle, interface=REQUEST)
        if self.answer_with == "ok":
            written = self.folder / f"Screenshot from call {len(self.asked)}.png"  # a space: the URI quotes it
            written.write_bytes(self.picture)
            self.written.append(written)
            self.conn.send(new_signal(request, "Response", "ua{sv}", (0, {"uri": ("s", _uri(written))})))
        elif self.answer_with in ("cancel", "fail"):
            self.conn.send(new_signal(request, "Response", "ua{sv}", (1 if self.answer_with == "cancel" else 2, {})))
        self.reply(msg, "o", (handle,))


def _uri(path: Path) -> str:
    return "file://" + quote(str(path))

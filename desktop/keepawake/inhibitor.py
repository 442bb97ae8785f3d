"""Holding off sleep through logind: `org.freedesktop.login1.Manager.Inhibit` on the system bus hands back a file
descriptor, and the inhibitor lasts exactly as long as that descriptor stays open. Closing it releases it, and so
does the app ending in any way, so nothing can be left keeping the computer awake. Each call opens its own short
connection to the bus (jeepney's blocking one, on a worker thread: its asyncio one passes no descriptors);
the descriptor outlives the connection."""

from __future__ import annotations

import asyncio
import os

WHO = "Nanobot Tray"
WHAT = "sleep"  # suspend and hibernate; the screen may still lock and blank
MODE = "block"  # the user can still force a suspend; a lid switch set to ignore inhibitors still sleeps
ANSWER_WITHIN = 5.0  # seconds for logind's answer


class Unavailable(Exception):
    """This computer cannot hold off sleep for the app (no system bus, no logind, refused); the message says which."""


async def inhibit(why: str) -> int:
    """Take a sleep inhibitor; its file descriptor, to `release` when the work is done. Raises Unavailable."""
    return await asyncio.to_thread(_inhibit, why)


def _inhibit(why: str) -> int:
    """jeepney's blocking connection (run on a worker thread): only it passes file descriptors."""
    try:
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
        from jeepney.io.blocking import open_dbus_connection
    except ImportError:
        raise Unavailable("only on Linux (logind, through jeepney)") from None
    logind = DBusAddress("/org/freedesktop/login1", bus_name="org.freedesktop.login1",
                         interface="org.freedesktop.login1.Manager")
    try:
        with open_dbus_connection("SYSTEM", enable_fds=True) as conn:
            reply = conn.send_and_get_reply(new_method_call(logind, "Inhibit", "ssss", (WHAT, WHO, why, MODE)),
                                            timeout=ANSWER_WITHIN)
    except TimeoutError:
        raise Unavailable(f"logind did not answer within {ANSWER_WITHIN:g} s") from None
    except (OSError, ValueError, KeyError) as exc:  # no bus socket, or no address for it
        raise Unavailable(f"no system bus ({exc})") from None
    if reply.header.message_type is MessageType.error:
        name = reply.header.fields.get(HeaderFields.error_name, "an error")
        detail = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
        raise Unavailable(f"logind refused: {name}{': ' + detail if detail else ''}")
    return int(reply.body[0].to_raw_fd())


def release(fd: int) -> None:
    os.close(fd)

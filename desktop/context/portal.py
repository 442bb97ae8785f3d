"""Screenshots on Wayland, through xdg-desktop-portal. A Wayland compositor lets no program read the screen or
another program's window, so the portal's own dialog asks the person what to take (a window, a region, the
whole screen) and writes the picture to a file it names in its answer.

The answer is a signal on a Request object, which may come before the call's reply does (the dialog can be
skipped, or answered fast). Its path is known before the call (our name on the bus and a token we choose), so
the match for it is in place before the call is made. The person may take a while in the dialog; a portal that
never answers is given up on after ANSWER_WITHIN, and its dialog is asked to close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from desktop.workspace import access

log = logging.getLogger(__name__)

PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SCREENSHOT = "org.freedesktop.portal.Screenshot"
REQUEST = "org.freedesktop.portal.Request"
ANSWER_WITHIN = 120.0  # seconds the person may spend in the portal's dialog
MAX_PICTURE_BYTES = 50 * 1024 * 1024
CALL_WITHIN = 10.0  # seconds for the bus to start the portal and for it to take the call (not to answer it)

X11, PORTAL, NONE = "x11", "portal", "none"  # the screenshot routes
NEEDS_PORTAL = ("Screenshots on Wayland need xdg-desktop-portal (with your desktop's backend, such as "
                "xdg-desktop-portal-gnome or -kde), and it is not running here.")
NO_SCREENSHOTS = ("This desktop's xdg-desktop-portal takes no screenshots: its backend has no Screenshot portal "
                  "(install your desktop's, such as xdg-desktop-portal-gnome or -kde).")
_MISSING = ("org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner")
_UNOFFERED = ("org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
              "org.freedesktop.DBus.Error.UnknownObject")


def screenshot_route(env: Mapping[str, str] = os.environ) -> str:
    """How a screenshot is taken in this session: X11 (read from the X server), the portal (Wayland) or none.

    Under Wayland an X connection (XWayland) sees only the X programs' windows, so the portal is the route
    whenever the session is Wayland; a session that says it is X11 keeps X11 even with a WAYLAND_DISPLAY set
    (a Wayland compositor nested in it: the windows a person works in are X windows)."""
    session = env.get("XDG_SESSION_TYPE", "")
    if env.get("DISPLAY") and session == "x11":
        return X11
    if env.get("WAYLAND_DISPLAY") or session == "wayland":
        return PORTAL
    return X11 if env.get("DISPLAY") else NONE


@dataclass(frozen=True)
class Shot:
    """What the portal gave: a picture, or why there is none ("" when the person cancelled: nothing to say)."""

    data: bytes = b""  # the picture as the portal wrote it
    suffix: str = ".png"  # its file's, which says its type to whoever sends it on
    problem: str = ""


class _Unanswered(Exception):
    """The portal took no screenshot; the message says why, in words for the person."""


async def portal_screenshot() -> Shot:
    """Ask the portal for a screenshot through its interactive dialog and read the picture it wrote. Never
    raises: a failure is a Shot with a problem."""
    from jeepney.io.asyncio import open_dbus_router

    try:
        async with asyncio.timeout(CALL_WITHIN):
            router_cm = open_dbus_router(bus="SESSION")
            router = await router_cm.__aenter__()
    except Exception as exc:  # no session bus (the variable unset, or nobody listening there)
        log.info("no session bus for the screenshot portal: %s", exc)
        return Shot(problem=f"{NEEDS_PORTAL} (There is no session D-Bus to reach it on.)")
    try:
        uri = await _ask(router)
    except _Unanswered as exc:
        return Shot(problem=str(exc))
    except Exception as exc:  # the bus went away mid-way, or would not take our match
        log.warning("asking the screenshot portal failed", exc_info=True)
        return Shot(problem=f"The desktop portal could not be asked for a screenshot ({exc or type(exc).__name__}).")
    finally:
        with contextlib.suppress(Exception):
            await router_cm.__aexit__(None, None, None)
    if uri is None:
        return Shot()
    path = _local_path(uri)
    if path is None:
        return Shot(problem=f"The desktop portal put the screenshot at {uri}, which is not a file on this computer.")
    try:  # a regular file of sane size, not a link or a pipe put where the portal said (it may be the workspace)
        data = await asyncio.to_thread(access.read_bytes, path.parent, path.name, MAX_PICTURE_BYTES)
    except OSError as exc:
        return Shot(problem=f"The screenshot the desktop portal wrote could not be read: {exc.strerror or exc}")
    named = mimetypes.guess_type(path.name)[0] or ""
    return Shot(data, path.suffix.lower() if named.startswith("image/") else ".png")  # portals write PNG


async def _ask(router: Any) -> str | None:
    """The picture's URI, or None when the person cancelled the dialog."""
    from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, new_method_call

    token = f"nanobot_{secrets.token_hex(6)}"
    expected = f"{PORTAL_PATH}/request/{router.unique_name.lstrip(':').replace('.', '_')}/{token}"
    answers = MatchRule(type="signal", interface=REQUEST, member="Response")
    with router.filter(answers, bufsize=8) as queue:
        await _listen_on(router, expected)
        portal = DBusAddress(PORTAL_PATH, bus_name=PORTAL_NAME, interface=SCREENSHOT)
        options = {"handle_token": ("s", token), "interactive": ("b", True)}
        try:
            async with asyncio.timeout(CALL_WITHIN):
                reply = await router.send_and_get_reply(new_method_call(portal, "Screenshot", "sa{sv}", ("", options)))
        except TimeoutError:
            raise _Unanswered("The desktop portal did not take the screenshot request.") from None
        if reply.header.message_type == MessageType.error:
            raise _Unanswered(_refusal(str(reply.header.fields.get(HeaderFields.error_name)), reply.body))
        handle = str(reply.body[0])
        if handle != expected:  # a portal older than the handle_token option names its own path
            await _listen_on(router, handle)
        try:
            async with asyncio.timeout(ANSWER_WITHIN):
                while (answer := await queue.get()).header.fields.get(HeaderFields.path) not in (expected, handle):
                    pass
        except TimeoutError:
            await _close(router, handle)
            raise _Unanswered(f"No screenshot: the screenshot dialog gave no answer within "
                              f"{_duration(ANSWER_WITHIN)}.") from None
    code, results = answer.body
    if code == 1:
        return None
    if code != 0:
        raise _Unanswered("The desktop portal could not take the screenshot.")
    uri = results.get("uri", ("s", ""))[1]
    if not uri:
        raise _Unanswered("The desktop portal answered without a picture.")
    return str(uri)


async def _listen_on(router: Any, path: str) -> None:
    """Have the bus send us Response signals on `path` (a portal may broadcast them)."""
    from jeepney import MatchRule
    from jeepney.bus_messages import message_bus

    rule = MatchRule(type="signal", interface=REQUEST, member="Response", path=path)
    async with asyncio.timeout(CALL_WITHIN):
        await router.send_and_get_reply(message_bus.AddMatch(rule))


async def _close(router: Any, handle: str) -> None:
    """Ask the portal to take down a dialog we no longer wait for (so it cannot attach anything later)."""
    from jeepney import DBusAddress, new_method_call

    with contextlib.suppress(Exception):
        async with asyncio.timeout(CALL_WITHIN):
            await router.send_and_get_reply(new_method_call(
                DBusAddress(handle, bus_name=PORTAL_NAME, interface=REQUEST), "Close"))


def _refusal(error: str, body: tuple[Any, ...]) -> str:
    if error in _MISSING or error.startswith("org.freedesktop.DBus.Error.Spawn"):
        return NEEDS_PORTAL
    if error in _UNOFFERED:
        return NO_SCREENSHOTS
    detail = f": {body[0]}" if body else ""
    return f"The desktop portal refused the screenshot ({error}{detail})."


def _local_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parsed.path))


def _duration(seconds: float) -> str:
    if seconds >= 60:
        return f"{seconds / 60:g} minute{'s' if seconds != 60 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"

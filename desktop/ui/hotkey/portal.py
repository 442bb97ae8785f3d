"""Wayland: ask xdg-desktop-portal's GlobalShortcuts interface for the chord (the compositor may let
the user confirm or change it). Best effort: written to the portal specification, not exercised on
a live portal here (Debian 12's portal 1.16 has no GlobalShortcuts backend)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from typing import Any

from desktop.kernel.taskset import spawn
from desktop.ui.hotkey import Chord, Fire, HotkeyError
from desktop.ui.hotkey.x11 import keysym_name

log = logging.getLogger(__name__)

PORTAL_NAME = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
SHORTCUTS = "org.freedesktop.portal.GlobalShortcuts"
SHORTCUT_ID = "quick-prompt"
TIMEOUT = 60.0  # the portal may show a confirmation dialog
_TRIGGER_MODS = {"ctrl": "CTRL", "alt": "ALT", "shift": "SHIFT", "super": "LOGO"}


def preferred_trigger(chord: Chord) -> str:
    """The shortcut in the XDG shortcuts format, e.g. CTRL+ALT+space."""
    mods = [_TRIGGER_MODS[m] for m in ("ctrl", "alt", "shift", "super") if m in chord.modifiers]
    return "+".join([*mods, keysym_name(chord.key)])


class PortalShortcut:
    def __init__(self) -> None:
        self._router_cm: Any = None
        self._router: Any = None
        self._session: str | None = None
        self._listener: asyncio.Task[None] | None = None

    async def start(self, chord: Chord, fire: Fire) -> None:
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            raise HotkeyError("no session D-Bus, so the desktop portal cannot register a global hotkey")
        try:
            await self._start(chord, fire)
        except HotkeyError:
            self.stop()
            raise
        except Exception as exc:
            self.stop()
            raise HotkeyError(f"the desktop portal does not offer global shortcuts here ({exc})") from exc

    async def _start(self, chord: Chord, fire: Fire) -> None:
        from jeepney import DBusAddress, MatchRule, MessageType, Properties, new_method_call
        from jeepney.bus_messages import message_bus
        from jeepney.io.asyncio import open_dbus_router

        self._router_cm = open_dbus_router(bus="SESSION")
        router = self._router = await self._router_cm.__aenter__()
        portal = DBusAddress(PORTAL_PATH, bus_name=PORTAL_NAME, interface=SHORTCUTS)
        version = await router.send_and_get_reply(Properties(portal).get("version"))
        if version.header.message_type == MessageType.error:
            raise HotkeyError("the desktop portal has no GlobalShortcuts interface")

        async def request(method: str, signature: str, args: tuple[Any, ...],
                          options: dict[str, Any]) -> dict[str, Any]:
            token = f"nanobot_{secrets.token_hex(6)}"
            sender = router.unique_name.lstrip(":").replace(".", "_")
            path = f"{PORTAL_PATH}/request/{sender}/{token}"
            rule = MatchRule(type="signal", interface="org.freedesktop.portal.Request", member="Response", path=path)
            await router.send_and_get_reply(message_bus.AddMatch(rule))
            with router.filter(rule) as responses:
                reply = await router.send_and_get_reply(new_method_call(
                    portal, method, signature, (*args, {**options, "handle_token": ("s", token)})))
                if reply.header.message_type == MessageType.error:
                    raise HotkeyError(f"the desktop portal refused {method}: {reply.body}")
                async with asyncio.timeout(TIMEOUT):
                    code, results = (await responses.get()).body
            if code != 0:
                raise HotkeyError(f"the global shortcut was not granted ({'cancelled' if code == 1 else 'failed'})")
            return dict(results)

        created = await request("CreateSession", "a{sv}", (),
                                {"session_handle_token": ("s", f"nanobot_{secrets.token_hex(6)}")})
        self._session = str(created["session_handle"][1])
        shortcut = (SHORTCUT_ID, {"description": ("s", "Open the Nanobot Tray quick prompt"),
                                  "preferred_trigger": ("s", preferred_trigger(chord))})
        activated = MatchRule(type="signal", interface=SHORTCUTS, member="Activated", path=PORTAL_PATH)
        await router.send_and_get_reply(message_bus.AddMatch(activated))
        await request("BindShortcuts", "oa(sa{sv})sa{sv}", (self._session, [shortcut], ""), {})
        self._listener = asyncio.ensure_future(self._listen(router, activated, fire))

    async def _listen(self, router: Any, rule: Any, fire: Fire) -> None:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        with router.filter(rule, queue=queue):
            while True:
                message = await queue.get()
                session, shortcut_id = message.body[0], message.body[1]
                if session == self._session and shortcut_id == SHORTCUT_ID:
                    fire(True)

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None
        if self._router_cm is not None:
            spawn(self._close(self._router_cm, self._router, self._session))
        self._router_cm = self._router = self._session = None

    @staticmethod
    async def _close(router_cm: Any, router: Any, session: str | None) -> None:
        from jeepney import DBusAddress, new_method_call

        with contextlib.suppress(Exception):
            if session and router is not None:
                await router.send(new_method_call(
                    DBusAddress(session, bus_name=PORTAL_NAME, interface="org.freedesktop.portal.Session"), "Close"))
            await router_cm.__aexit__(None, None, None)

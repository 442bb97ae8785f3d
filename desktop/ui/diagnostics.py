"""Desktop-integration lines for `nanobot-tray doctor`: tray host, hotkey backend, notification service, and
how a screenshot is taken.

Runs in the headless CLI, so it asks X11 and D-Bus directly instead of creating a QApplication
(which would abort without a display). If the app is running, its own live status is reported."""

from __future__ import annotations

import os
import sys
from typing import Any

from desktop.kernel.paths import home
from desktop.ui import hotkey
from desktop.ui.single_instance import InstanceUnresponsive, send_to_running, server_name

DBUS_TIMEOUT = 2.0


def lines(chord: str) -> list[str]:
    try:
        running = send_to_running(server_name(home()), {"action": "status"})
    except InstanceUnresponsive as exc:
        running = None
        app = f"running but not answering ({exc})"
    else:
        app = f"running (pid {running.get('pid')})" if running else "not running"
    if running:
        hotkey_line = running.get("hotkey", "unknown")
        notices = running.get("notifications", "unknown")
    else:
        hotkey_line = hotkey_probe(chord)
        notices = notification_service()
    return [f"app:        {app}",
            f"tray:       {tray_host()}",
            f"hotkey:     {hotkey_line}",
            f"notices:    {notices}",
            f"screenshot: {screenshot_route()}"]


def tray_host() -> str:
    if sys.platform in ("win32", "darwin"):
        return "system tray / menu bar"
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no graphical session in this shell (DISPLAY unset)"
    if _bus_has_name("org.kde.StatusNotifierWatcher"):
        return "StatusNotifierItem host (org.kde.StatusNotifierWatcher)"
    if _xembed_tray():
        return "XEmbed system tray (_NET_SYSTEM_TRAY)"
    return ("none found: the chat opens as a normal window (on GNOME install the "
            "AppIndicator/KStatusNotifierItem extension)")


def hotkey_probe(chord: str) -> str:
    """What the app would get for `chord` here, found by trying (the grab is released at once)."""
    backend = hotkey.detect_backend()
    label = hotkey.BACKEND_LABELS[backend]
    try:
        parsed = hotkey.parse_chord(chord)
    except ValueError as exc:
        return f"{label}: {exc}"
    if backend == "x11":
        from desktop.ui.hotkey.x11 import grab, release

        try:
            display, _keycode, grabs = grab(parsed)
        except hotkey.HotkeyError as exc:
            return f"{label}: {exc}"
        release(display, grabs)
        return f"{parsed} via {label} (free)"
    if backend == "portal":
        if _portal_has_shortcuts():
            return f"{parsed} via {label}"
        return f"no global hotkey on this Wayland session (the portal lacks GlobalShortcuts). {hotkey.BIND_HINT}"
    if backend == "pynput":
        return f"{parsed} via {label}"
    return f"none in this session. {hotkey.BIND_HINT}"


def notification_service() -> str:
    if not sys.platform.startswith("linux"):
        return "tray balloons"
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return "no session D-Bus: notifications fall back to tray balloons"
    from jeepney import DBusAddress, new_method_call

    address = DBusAddress("/org/freedesktop/Notifications", bus_name="org.freedesktop.Notifications",
                          interface="org.freedesktop.Notifications")
    body = _call(new_method_call(address, "GetServerInformation"))
    if body is None:
        return "no notification service on the session bus: tray balloons instead"
    name, vendor, version = body[0], body[1], body[2]
    return f"org.freedesktop.Notifications ({name} {version}, {vendor})"


def screenshot_route() -> str:
    """How the `+` menu (and on X11 `hotkeys.screen`) takes a screenshot in this session, and whether it can."""
    from desktop.context import portal

    route = portal.screenshot_route()
    if route == portal.X11:
        return "X11: the window in front, or a region picked on the frozen screen"
    if route == portal.NONE:
        return "none in this session (no X11 or Wayland display)"
    from jeepney import DBusAddress, Properties

    address = DBusAddress(portal.PORTAL_PATH, bus_name=portal.PORTAL_NAME, interface=portal.SCREENSHOT)
    version = _call(Properties(address).get("version"))
    if version is not None:
        return f"xdg-desktop-portal Screenshot (version {version[0][1]}): your desktop's own dialog (Wayland)"
    return portal.NO_SCREENSHOTS if _bus_has_name(portal.PORTAL_NAME) else portal.NEEDS_PORTAL


def _call(message: Any) -> tuple[Any, ...] | None:
    """One blocking D-Bus call; None on any failure (no bus, no service, error reply)."""
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        return None
    try:
        from jeepney import MessageType
        from jeepney.io.blocking import open_dbus_connection

        with open_dbus_connection(bus="SESSION") as conn:
            reply = conn.send_and_get_reply(message, timeout=DBUS_TIMEOUT)
    except Exception:
        return None
    return None if reply.header.message_type == MessageType.error else tuple(reply.body)


def _bus_has_name(name: str) -> bool:
    from jeepney.bus_messages import message_bus

    body = _call(message_bus.NameHasOwner(name))
    return bool(body and body[0])


def _portal_has_shortcuts() -> bool:
    from jeepney import DBusAddress, Properties

    portal = DBusAddress("/org/freedesktop/portal/desktop", bus_name="org.freedesktop.portal.Desktop",
                         interface="org.freedesktop.portal.GlobalShortcuts")
    return _call(Properties(portal).get("version")) is not None


def _xembed_tray() -> bool:
    if not os.environ.get("DISPLAY"):
        return False
    try:
        from Xlib import display

        d = display.Display()
    except Exception:
        return False
    try:
        atom = d.intern_atom(f"_NET_SYSTEM_TRAY_S{d.get_default_screen()}")
        return d.get_selection_owner(atom) != 0
    finally:
        d.close()

"""Which window the person is working in, asked of the X server through python-xlib (already needed for the
global hotkey, so no new dependency and no `xprop` process to start per press).

The window manager names the active window in the root window's _NET_ACTIVE_WINDOW and the stacking order in
_NET_CLIENT_LIST_STACKING (EWMH); without a window manager neither exists and the answer is None. Blocking
(a few round trips to the X server): call it from a thread, or accept a millisecond on the GUI thread."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WindowRef:
    wid: int  # the client window's X id, as QScreen.grabWindow takes it
    title: str
    pid: int  # _NET_WM_PID, 0 when the window does not say


def active_window() -> WindowRef | None:
    """The window the window manager has focused now, or None (no X display, no window manager)."""
    with _display() as d:
        if d is None:
            return None
        wid = _cardinals(d, d.screen().root, "_NET_ACTIVE_WINDOW")
        return _describe(d, wid[0]) if wid and wid[0] else None


def window_behind(own_pid: int | None = None) -> WindowRef | None:
    """The topmost window that is not this process's: the one the person was working in before they opened
    the quick prompt or the chat (whose own windows are in front of it now)."""
    own = os.getpid() if own_pid is None else own_pid
    with _display() as d:
        if d is None:
            return None
        for wid in reversed(_cardinals(d, d.screen().root, "_NET_CLIENT_LIST_STACKING")):
            found = _describe(d, wid)
            if found is not None and found.pid != own and _viewable(d, wid) and _ordinary(d, wid):
                return found
        return None


class _display:
    """A short-lived connection (the hotkey's own one reads events on the Qt thread and stays untouched)."""

    def __enter__(self) -> Any:
        try:
            from Xlib import display
        except ImportError:
            self.d = None
            return None
        try:
            self.d = display.Display()
        except Exception as exc:  # no DISPLAY, or the server refused us
            log.debug("no X display for the active window: %s", exc)
            self.d = None
        return self.d

    def __exit__(self, *_exc: object) -> None:
        if self.d is not None:
            self.d.close()


def _cardinals(d: Any, window: Any, name: str) -> list[int]:
    from Xlib import X

    try:
        prop = window.get_full_property(d.intern_atom(name), X.AnyPropertyType)
    except Exception:  # the window went away meanwhile (BadWindow)
        return []
    return [int(v) for v in prop.value] if prop is not None else []


def _describe(d: Any, wid: int) -> WindowRef | None:
    try:
        window = d.create_resource_object("window", wid)
        utf8 = d.intern_atom("UTF8_STRING")
        name = window.get_full_property(d.intern_atom("_NET_WM_NAME"), utf8)
        title = name.value.decode("utf-8", "replace") if name is not None else (window.get_wm_name() or "")
        if isinstance(title, bytes):
            title = title.decode("latin-1")
    except Exception:  # BadWindow: closed between the list and now
        return None
    pid = _cardinals(d, window, "_NET_WM_PID")
    return WindowRef(wid, str(title), pid[0] if pid else 0)


def _ordinary(d: Any, wid: int) -> bool:
    """A window a person works in: not a panel, tray, desktop or notification (their _NET_WM_WINDOW_TYPE)."""
    kinds = _cardinals(d, d.create_resource_object("window", wid), "_NET_WM_WINDOW_TYPE")
    work = {d.intern_atom(f"_NET_WM_WINDOW_TYPE_{name}") for name in ("NORMAL", "DIALOG", "UTILITY")}
    return not kinds or kinds[0] in work


def _viewable(d: Any, wid: int) -> bool:
    from Xlib import X

    try:
        return bool(d.create_resource_object("window", wid).get_attributes().map_state == X.IsViewable)
    except Exception:
        return False


def selection_text(name: str = "PRIMARY", timeout: float = 1.0) -> str | None:
    """The text in the X selection `name` (PRIMARY: what is selected; CLIPBOARD: what was copied), "" when
    nobody owns it, None without X or when the owner gives no text in time. Blocking: run it in a thread.

    Asked with CurrentTime from a connection of its own: Qt's clipboard asks with the last event time its own
    connection saw, which is older than a selection made after our windows last heard from the server (a hotkey
    press reaches us on another connection), and an owner must refuse such a request (ICCCM), so Qt reads
    nothing."""
    from Xlib import X

    with _display() as d:
        if d is None:
            return None
        selection = d.intern_atom(name)
        if d.get_selection_owner(selection) == X.NONE:
            return ""
        window = d.screen().root.create_window(0, 0, 1, 1, 0, X.CopyFromParent)
        target = d.intern_atom("NANOBOT_TRAY_SELECTION")
        for kind in (d.intern_atom("UTF8_STRING"), d.intern_atom("STRING")):
            window.convert_selection(selection, kind, target, X.CurrentTime)
            d.flush()
            notified = _wait_notify(d, window.id, timeout)
            if notified is None:
                return None
            if notified.property == X.NONE:
                continue  # the owner has no text of this kind: try the next
            value = window.get_full_property(target, X.AnyPropertyType)
            if value is None or value.property_type == d.intern_atom("INCR"):
                return None  # larger than one request: the caller falls back to Qt's reading
            data = value.value if isinstance(value.value, bytes) else bytes(value.value)
            return data.decode("utf-8" if kind != d.intern_atom("STRING") else "latin-1", "replace")
        return None


def _wait_notify(d: Any, window_id: int, timeout: float) -> Any:
    import select
    import time

    from Xlib import X

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        while d.pending_events():
            event = d.next_event()
            if event.type == X.SelectionNotify and event.requestor.id == window_id:
                return event
        select.select([d.fileno()], [], [], max(0.0, deadline - time.monotonic()))
    return None

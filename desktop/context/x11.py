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
            if found is not None and found.pid != own and _viewable(d, wid):
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


def _viewable(d: Any, wid: int) -> bool:
    from Xlib import X

    try:
        return bool(d.create_resource_object("window", wid).get_attributes().map_state == X.IsViewable)
    except Exception:
        return False

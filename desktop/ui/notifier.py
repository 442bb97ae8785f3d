"""Desktop notifications with an "Open" action that brings up the chat they are about.

On Linux they go to org.freedesktop.Notifications over D-Bus (jeepney on the asyncio loop: Qt's
own D-Bus marshalling cannot produce the Notify signature, and QSystemTrayIcon.showMessage only
reaches the service on StatusNotifierItem trays). Elsewhere, or without the service, the tray
balloon is used.

Notes that arrive together (within GROUP_SECONDS of the first) are shown as one, so five background tasks
finishing at once are one notification, not a burst. Do not disturb holds notes instead of showing them
and shows what it held, as one, when it is turned off. An approval question is never held or grouped: it
would be stale by then (it waits on its chat's card), and its buttons answer that one question. A note whose
buttons do not go stale (a reminder's "Allow and run again") is held like any other; alone it keeps them."""

from __future__ import annotations

import asyncio
import html
import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from desktop.kernel.notices import Notice, OpenChat, Target
from desktop.kernel.taskset import TaskSet

log = logging.getLogger(__name__)

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
APP_NAME = "Nanobot Tray"
ICON_NAME = "nanobot-tray"
DBUS_TIMEOUT = 5.0
GROUP_SECONDS = 1.5  # notes arriving this soon after the first are shown together
GROUP_NAMES = 3  # titles named in a group's title
GROUP_LINES = 5  # notes listed in a group's body
LINE_CHARS = 90


class Notifier(QObject):
    """`notify` shows a notice (the shell hands it those the core publishes); `activated` fires when the user
    clicks a notification."""

    activated = Signal(object)  # the notification's Target, or None for "just open the app"
    held_changed = Signal(int)  # how many notes Do not disturb holds now

    def __init__(self, tray: QSystemTrayIcon, enabled: Callable[[], bool], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._enabled = enabled  # the notifications setting: off drops them
        self._quiet = False  # Do not disturb: held until it is turned off
        self.held: list[Notice] = []
        self._burst: list[Notice] = []  # waiting for the group window to close
        self._burst_timer = QTimer(self, singleShot=True, interval=int(GROUP_SECONDS * 1000))
        self._burst_timer.timeout.connect(self._show_burst)
        self._router: Any = None
        self._router_cm: Any = None
        self._listener: asyncio.Task[None] | None = None
        self._targets: dict[int, Target | None] = {}  # notification id → what a click opens
        self._on_action: dict[int, Callable[[str], None]] = {}  # notification id → who hears its buttons
        self._buttons: bool | None = None  # the service shows actions besides the default one (asked on first need)
        self._by_target: dict[Target, int] = {}  # so a newer note about a chat replaces the older one
        self._balloon_target: Target | None = None
        self._tasks = TaskSet("notifications")
        self.attach(tray)

    def attach(self, tray: QSystemTrayIcon) -> None:
        """Use this tray icon for balloons (the tray may replace its icon object)."""
        self._tray = tray
        tray.messageClicked.connect(lambda: self.activated.emit(self._balloon_target))

    @property
    def backend(self) -> str:
        return BUS_NAME if self._router is not None else "tray balloon"

    async def start(self) -> None:
        """Connect to the session bus if there is one; otherwise stay on tray balloons."""
        if not sys.platform.startswith("linux") or not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            return
        try:
            from jeepney import MatchRule
            from jeepney.bus_messages import message_bus
            from jeepney.io.asyncio import open_dbus_router

            self._router_cm = open_dbus_router(bus="SESSION")
            rule = MatchRule(type="signal", interface=BUS_NAME, path=OBJECT_PATH)
            async with asyncio.timeout(DBUS_TIMEOUT):
                router = await self._router_cm.__aenter__()
            async with asyncio.timeout(DBUS_TIMEOUT):
                await router.send_and_get_reply(message_bus.AddMatch(rule))
        except Exception as exc:  # no bus, refused, or jeepney missing: balloons still work
            log.warning("desktop notifications unavailable (%s); using tray balloons", exc)
            self._router_cm = None
            return
        self._router = router
        self._listener = asyncio.ensure_future(self._listen(router, rule))

    async def close(self) -> None:
        self._burst_timer.stop()
        if self._listener is not None:
            self._listener.cancel()
        if self._router_cm is not None:
            try:
                await self._router_cm.__aexit__(None, None, None)
            except Exception:
                log.debug("closing the D-Bus connection failed", exc_info=True)
        self._router = self._router_cm = None

    def notify(self, note: Notice) -> bool:
        """Show a notification (with any that arrive with it); False when it is not shown now: held by Do not
        disturb, or dropped (notifications off, or a question asked while Do not disturb is on)."""
        if not self._enabled():
            log.info("notification dropped (notifications are off): %s", note.title)
            return False
        question = note.withdraw_when is not None  # a note that goes stale; other buttons ("Allow and run again") keep
        if self._quiet and question:
            log.info("approval notification not shown (do not disturb; it waits in its chat): %s", note.title)
            return False
        if self._quiet:
            self.held.append(note)
            self.held_changed.emit(len(self.held))
            return False
        if question:
            self._show(note)
            return True
        self._burst.append(note)
        if not self._burst_timer.isActive():
            self._burst_timer.start()
        return True

    def set_do_not_disturb(self, on: bool) -> None:
        """Turning it off shows what it held, as one notification."""
        self._quiet = on
        if on or not self.held:
            return
        held, self.held = self.held, []
        self.held_changed.emit(0)
        self._show(group(held), alone=len(held) == 1)

    def _show_burst(self) -> None:
        burst, self._burst = self._burst, []
        if burst:
            self._show(group(burst), alone=len(burst) == 1)

    def _show(self, note: Notice, alone: bool = True) -> None:
        """`alone`: a note about one thing, which a newer note about its chat replaces on screen (a group
        neither replaces nor is replaced: the others in it would be lost)."""
        if self._router is None:
            self._balloon(note)
        else:
            self._tasks.spawn(self._send(note, alone))

    def _balloon(self, note: Notice) -> None:
        self._balloon_target = note.target
        self._tray.showMessage(note.title, note.body, QSystemTrayIcon.MessageIcon.Information, 10_000)

    async def _send(self, note: Notice, alone: bool) -> None:
        from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call

        address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
        title, body, target = note.title, note.body, note.target
        chat = _chat_of(target) if target is not None and alone else None
        replaces = self._by_target.get(chat, 0) if chat is not None else 0
        hints = {"desktop-entry": ("s", "nanobot-tray")}
        actions = ["default", "Open"]
        if note.actions and self._buttons is None:
            self._buttons = "actions" in await _capabilities(self._router)
        if self._buttons:
            actions += [part for action in note.actions for part in action]
        message = new_method_call(address, "Notify", "susssasa{sv}i",
                                  (APP_NAME, replaces, ICON_NAME, title, html.escape(body, quote=False),
                                   actions, hints, -1))
        try:
            async with asyncio.timeout(DBUS_TIMEOUT):
                reply = await self._router.send_and_get_reply(message)
            if reply.header.message_type == MessageType.error:
                raise RuntimeError(f"{reply.header.fields.get(HeaderFields.error_name)}: {reply.body}")
        except Exception as exc:
            log.warning("desktop notification failed (%s); showing a tray balloon", exc)
            self._balloon(note)
            return
        note_id = int(reply.body[0])
        self._targets[note_id] = target
        if note.on_action is not None and self._buttons and note.actions:
            self._on_action[note_id] = note.on_action
        if chat is not None:
            self._by_target[chat] = note_id
        if note.withdraw_when is not None:
            note.withdraw_when(self._withdrawer(note_id))

    def _withdrawer(self, note_id: int) -> Callable[[], None]:
        def withdraw() -> None:
            self._tasks.spawn(self._withdraw(note_id))
        return withdraw

    async def _withdraw(self, note_id: int) -> None:
        """Take a notification that no longer applies off the screen (if it is still there)."""
        from jeepney import DBusAddress, new_method_call

        if self._router is None or note_id not in self._targets:
            return
        address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
        try:
            async with asyncio.timeout(DBUS_TIMEOUT):
                await self._router.send_and_get_reply(new_method_call(address, "CloseNotification", "u", (note_id,)))
        except Exception as exc:
            log.info("could not withdraw notification %d (%s)", note_id, exc)

    async def _listen(self, router: Any, rule: Any) -> None:
        from jeepney import HeaderFields

        queue: asyncio.Queue[Any] = asyncio.Queue()
        with router.filter(rule, queue=queue):
            while True:
                message = await queue.get()
                member = message.header.fields.get(HeaderFields.member)
                if member == "ActionInvoked":
                    note_id, action = message.body
                    if action != "default" and note_id in self._on_action:
                        self._on_action[note_id](action)
                    elif note_id in self._targets:
                        self.activated.emit(self._targets[note_id])
                elif member == "NotificationClosed":
                    self._on_action.pop(message.body[0], None)
                    target = self._targets.pop(message.body[0], None)
                    if target is not None and self._by_target.get(_chat_of(target)) == message.body[0]:
                        del self._by_target[_chat_of(target)]


def group(notes: list[Notice]) -> Notice:
    """One notification for several: the title counts and names them, the body has a line for each, and a click
    opens what the most recent one opens (the newest news is the likeliest reason to look)."""
    if len(notes) == 1:
        return notes[0]
    titles = list(dict.fromkeys(note.title for note in notes))
    named = ", ".join(titles[:GROUP_NAMES]) + (", …" if len(titles) > GROUP_NAMES else "")
    lines = [_shorten(f"{note.title}: {note.body}" if note.body else note.title) for note in notes[:GROUP_LINES]]
    if len(notes) > GROUP_LINES:
        lines.append(f"and {len(notes) - GROUP_LINES} more")
    target = next((note.target for note in reversed(notes) if note.target is not None), None)
    return Notice(f"{len(notes)} updates: {named}", "\n".join(lines), target)


def _shorten(line: str) -> str:
    flat = " ".join(line.split())
    return flat if len(flat) <= LINE_CHARS else flat[:LINE_CHARS - 1] + "…"


def _chat_of(target: Target) -> Target:
    """What a newer note replaces an older one by: the chat, whichever message in it each opens at."""
    return OpenChat(target.session_key) if isinstance(target, OpenChat) else target


async def _capabilities(router: Any) -> list[str]:
    """What the notification service can show ("actions": buttons); nothing extra when it will not say."""
    from jeepney import DBusAddress, MessageType, new_method_call

    address = DBusAddress(OBJECT_PATH, bus_name=BUS_NAME, interface=BUS_NAME)
    try:
        async with asyncio.timeout(DBUS_TIMEOUT):
            reply = await router.send_and_get_reply(new_method_call(address, "GetCapabilities"))
    except Exception as exc:
        log.info("the notification service did not list its capabilities (%s)", exc)
        return []
    if reply.header.message_type == MessageType.error or not reply.body:
        return []
    return [str(c) for c in reply.body[0]]

"""Desktop notifications through the real daemon (dunst on a private session bus), in process."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from desktop.kernel.notices import Notice, OpenChat, Target
from desktop.ui.notifier import Notifier
from tests.e2e.xdesktop import Desktop
from tests.ui.conftest import until

pytestmark = pytest.mark.e2e


async def _dunstctl(desktop: Desktop, *args: str) -> None:
    proc = await asyncio.create_subprocess_exec("dunstctl", *args, env=desktop.env)
    assert await asyncio.wait_for(proc.wait(), 10) == 0


async def test_a_notification_reaches_the_daemon_and_its_action_opens_the_chat(
        desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    await _dunstctl(desktop, "close-all")
    allowed = [True]
    notifier = Notifier(QSystemTrayIcon(), lambda: allowed[0])
    await notifier.start()
    opened: list[Target | None] = []
    notifier.activated.connect(opened.append)
    try:
        assert notifier.backend == "org.freedesktop.Notifications"
        assert notifier.notify(Notice("Reminder due", "Water the <plants> & herbs",
                                                   OpenChat("desktop:garden")))
        await until(lambda: 'string "Reminder due"' in desktop.notifications_log())
        log = desktop.notifications_log()
        assert 'string "Water the &lt;plants&gt; &amp; herbs"' in log  # markup-safe body
        assert 'string "default"' in log and 'string "Open"' in log
        await _dunstctl(desktop, "action", "0")  # the user clicks the notification
        await until(lambda: opened == [OpenChat("desktop:garden")])

        allowed[0] = False  # notifications turned off in Settings
        assert not notifier.notify(Notice("Silenced", "should not appear", OpenChat("desktop:garden")))
        await asyncio.sleep(0.5)
        assert "Silenced" not in desktop.notifications_log()
    finally:
        await notifier.close()


async def test_notes_that_come_together_are_one_and_do_not_disturb_holds_them(
        desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    await _dunstctl(desktop, "close-all")
    notifier = Notifier(QSystemTrayIcon(), lambda: True)
    await notifier.start()
    opened: list[Target | None] = []
    notifier.activated.connect(opened.append)
    try:
        for chat, body in (("Garden", "The tomatoes need water."), ("Taxes", "The form is filled in."),
                           ("Heartbeat", "The build is green again.")):
            notifier.notify(Notice(chat, body, OpenChat(f"desktop:{chat.lower()}", 4)))
        await until(lambda: 'string "3 updates: Garden, Taxes, Heartbeat"' in desktop.notifications_log())
        await asyncio.sleep(0.5)
        desktop.screenshot("notifier-group")
        log = desktop.notifications_log()
        assert 'string "Garden"' not in log and 'string "Taxes"' not in log  # not one by one
        await _dunstctl(desktop, "action", "0")
        await until(lambda: opened == [OpenChat("desktop:heartbeat", 4)])  # the most recent one's chat

        await _dunstctl(desktop, "close-all")
        notifier.set_do_not_disturb(True)
        assert not notifier.notify(Notice("Quiet one", "held", OpenChat("desktop:a")))
        assert not notifier.notify(Notice("Quiet two", "held", OpenChat("desktop:b")))
        await asyncio.sleep(2)
        assert "Quiet one" not in desktop.notifications_log() and len(notifier.held) == 2
        notifier.set_do_not_disturb(False)
        await until(lambda: 'string "2 updates: Quiet one, Quiet two"' in desktop.notifications_log())
        await asyncio.sleep(0.5)
        desktop.screenshot("notifier-released")
    finally:
        await notifier.close()


async def _emit_action_invoked(note_id: int, action: str) -> None:
    """What the daemon sends when a button is pressed (dunst only offers them through a menu program)."""
    from jeepney import DBusAddress, new_signal
    from jeepney.io.asyncio import open_dbus_router

    address = DBusAddress("/org/freedesktop/Notifications", interface="org.freedesktop.Notifications")
    async with open_dbus_router(bus="SESSION") as router:
        await router.send(new_signal(address, "ActionInvoked", "us", (note_id, action)))


async def test_an_approval_notification_has_allow_and_deny_buttons(
        desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    notifier = Notifier(QSystemTrayIcon(), lambda: True)
    await notifier.start()
    pressed: list[str] = []
    try:
        assert notifier.notify(Notice("Trip plans: allow exec?", "touch a", OpenChat("desktop:trip"),
                                                   (("allow", "Allow once"), ("deny", "Deny")), pressed.append))
        await until(lambda: notifier._on_action)
        # dbus-monitor writes the call to its log on its own time: under load after the reply is in
        await until(lambda: "member=Notify" in desktop.notifications_log(), message="the Notify call in the bus log")
        log = desktop.notifications_log()
        assert 'string "allow"' in log and 'string "Allow once"' in log and 'string "Deny"' in log
        (note_id,) = notifier._on_action
        await _emit_action_invoked(note_id, "deny")
        await until(lambda: pressed == ["deny"])
    finally:
        await notifier.close()


async def test_an_approval_answered_elsewhere_takes_its_notification_away(
        desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", desktop.env["DBUS_SESSION_BUS_ADDRESS"])
    notifier = Notifier(QSystemTrayIcon(), lambda: True)
    await notifier.start()
    withdraws: list[Callable[[], None]] = []
    try:
        assert notifier.notify(Notice("Trip plans: allow exec?", "touch b", OpenChat("desktop:b"),
                                                   (("allow", "Allow once"), ("deny", "Deny")), lambda _a: None,
                                                   withdraws.append))
        await until(lambda: withdraws and notifier._targets)
        (note_id,) = notifier._targets
        withdraws[0]()  # the question was answered in the chat's card
        await until(lambda: note_id not in notifier._targets, message="the daemon closed it")
        # the daemon's answer does not wait for dbus-monitor, which logs the call on its own time
        await until(lambda: "CloseNotification" in desktop.notifications_log(), message="the call in the bus log")
    finally:
        await notifier.close()

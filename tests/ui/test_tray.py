"""The tray icon: its menu, and the state a user reads off the icon and tooltip."""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QSystemTrayIcon

from desktop.kernel.bus import Event, TextDelta, TurnError, TurnFinished, TurnStarted
from desktop.subagents.events import BackgroundTasks, TaskSnapshot
from desktop.ui.icons import TrayState
from desktop.ui.tray import Tray


def _image(tray: Tray) -> QImage:
    return tray.icon.icon().pixmap(32, 32).toImage()


def _task(label: str, status: str = "running") -> TaskSnapshot:
    return TaskSnapshot(label.lower(), "desktop:a", label, status, started=0.0)


def feed(tray: Tray, event: Event) -> None:
    """An event as the app delivers it: reduced into the chats' state, then heard by the tray."""
    tray.conversations.on_event(event)
    tray.on_event(event)


def _entries(tray: Tray) -> list[str]:
    """The menu as the user sees it: visible entries, separators as ""."""
    return [a.text() for a in tray.menu.actions() if a.isVisible()]


def test_menu_offers_every_entry_point_in_order(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Features' entries (desktop/ui/features.py) come after the chat's, in the order they were added."""
    tray = Tray()
    fired: list[str] = []
    for label in ("Skills", "Memory && history"):
        tray.add_entry(label, lambda label=label: fired.append(label))
    assert _entries(tray) == ["New chat", "Quick prompt", "Chat", "Recent chats", "Skills", "Memory && history",
                              "Settings", "",
                              "Do not disturb", "", "Quit"]
    for name in ("new_chat", "quick_prompt", "show_chat", "settings", "quit_requested"):
        getattr(tray, name).connect(lambda name=name: fired.append(name))
    for action in tray.menu.actions():
        if action.text() and not action.isCheckable():
            action.trigger()
    assert fired == ["new_chat", "quick_prompt", "show_chat", "Skills", "Memory && history", "settings",
                     "quit_requested"]


def test_icon_and_tooltip_follow_the_agent(qtbot) -> None:  # type: ignore[no-untyped-def]
    titles = {"desktop:a": "Trip to Lisbon"}
    tray = Tray(title_of=lambda key: titles.get(key, key))
    tray.set_model("openai/gpt-test")
    idle = _image(tray)
    assert tray.state is TrayState.IDLE
    assert "Model: openai/gpt-test" in tray.icon.toolTip() and "Idle" in tray.icon.toolTip()

    feed(tray, TurnStarted("desktop:a"))
    feed(tray, TurnStarted("quick:default"))
    feed(tray, TextDelta("desktop:a", "hi"))
    assert tray.state is TrayState.WORKING
    assert _image(tray) != idle
    assert "Working on 2: Trip to Lisbon, quick:default" in tray.icon.toolTip()  # chats by their title
    titles["quick:default"] = "What time is it"  # a new chat is titled once its first message is saved
    feed(tray, TextDelta("quick:default", "It is"))
    assert "Working on 2: Trip to Lisbon, What time is it" in tray.icon.toolTip()

    feed(tray, TurnFinished("desktop:a", "done"))
    assert tray.state is TrayState.WORKING and "Working on 1: What time is it" in tray.icon.toolTip()
    feed(tray, TurnError("quick:default", "Can't reach the model server"))
    assert tray.state is TrayState.ATTENTION and _image(tray) != idle  # the icon says something went wrong
    assert "The last request failed: Can't reach the model server" in tray.icon.toolTip()
    feed(tray, TurnStarted("desktop:a"))
    feed(tray, TurnFinished("desktop:a", "it works again"))
    assert tray.state is TrayState.IDLE and _image(tray) == idle and "failed" not in tray.icon.toolTip()


def test_attention_wins_over_working_until_cleared(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    feed(tray, TurnStarted("desktop:a"))
    working = _image(tray)
    tray.set_attention(True)
    assert tray.state is TrayState.ATTENTION
    assert _image(tray) != working
    assert "needs your attention" in tray.icon.toolTip()
    tray.set_attention(False)
    assert tray.state is TrayState.WORKING


def test_many_running_tasks_are_summarised(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    for i in range(5):
        feed(tray, TurnStarted(f"desktop:{i}"))
    assert "Working on 5: desktop:0, desktop:1, desktop:2 and 2 more" in tray.icon.toolTip()


def test_left_click_toggles_chat_and_right_click_does_not(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    toggles: list[bool] = []
    tray.toggle_chat.connect(lambda: toggles.append(True))
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Context)
    assert toggles == []
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    assert toggles == [True]


def test_do_not_disturb_reports_user_changes_only(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    changes: list[bool] = []
    tray.dnd_changed.connect(changes.append)
    tray.set_dnd(True)  # restoring the stored setting is not a change
    assert tray.dnd_action.isChecked() and changes == []
    tray.dnd_action.trigger()  # the user unticks it
    assert changes == [False]


def test_a_recreated_icon_keeps_menu_state_and_clicks(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    tray.set_model("openai/m")
    feed(tray, TurnStarted("desktop:a"))
    working = _image(tray)
    old = tray.icon
    replaced: list[bool] = []
    tray.icon_replaced.connect(lambda: replaced.append(True))
    tray.recreate_icon()
    assert replaced == [True] and tray.icon is not old
    assert tray.icon.contextMenu() is tray.menu and _image(tray) == working
    assert "Model: openai/m" in tray.icon.toolTip() and "Working on 1" in tray.icon.toolTip()
    toggles: list[bool] = []
    tray.toggle_chat.connect(lambda: toggles.append(True))
    tray.icon.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    assert toggles == [True]


def test_background_tasks_show_as_working_with_their_count(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    feed(tray, BackgroundTasks([_task("Count files"), _task("Read the news"), _task("Old one", "done"),
                                   _task("Next one", "queued")]))
    assert tray.state is TrayState.WORKING
    assert "Background tasks: 2 (Count files, Read the news)" in tray.icon.toolTip()
    assert "Idle" not in tray.icon.toolTip()
    assert _entries(tray)[:2] == ["2 background tasks running", ""]  # first in the menu, to read, not to click
    assert not tray.background_action.isEnabled()
    feed(tray, BackgroundTasks([_task("Count files"), _task("Read the news", "done")]))
    assert _entries(tray)[0] == "1 background task running"
    feed(tray, BackgroundTasks([_task("Count files", "done")]))
    assert tray.state is TrayState.IDLE and "Background tasks" not in tray.icon.toolTip()
    assert _entries(tray)[0] == "New chat"  # the line and its separator go when none runs


def test_held_notifications_are_counted_in_the_menu_and_tooltip(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    tray.set_held(1)
    assert tray.held_action.isVisible() and tray.held_action.text() == "1 notification held"
    tray.set_held(3)
    assert "3 notifications held" in tray.tooltip().splitlines()
    tray.set_held(0)
    assert not tray.held_action.isVisible() and "held" not in tray.tooltip()


def test_the_quick_prompt_entry_shows_its_hotkey(qtbot) -> None:  # type: ignore[no-untyped-def]
    tray = Tray()
    assert tray.quick_action.shortcut().isEmpty()  # none bound: no hint
    tray.set_quick_hotkey("Ctrl+Alt+Space")
    assert tray.quick_action.shortcut().toString() == "Ctrl+Alt+Space"
    assert tray.quick_action.isShortcutVisibleInContextMenu()
    tray.set_quick_hotkey("Super+Space")  # as config.yaml spells the Windows key
    assert tray.quick_action.shortcut().toString() == "Meta+Space"
    tray.menu.grab().save("/tmp/tray-menu.png")

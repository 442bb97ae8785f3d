"""The tray icon: shows what the agent is doing and offers the app's entry points.

It only emits signals for the user's choices; desktop/ui/app.py decides what each one opens. Features add
their own entries (`add_entry`), between the chat's and Settings. The quick prompt's entry shows its global
hotkey, and "Recent chats" lists the last chats, read again (off the GUI thread) each time the menu opens and
when a turn starts or ends."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.conversation.state import Conversations
from desktop.kernel.bus import Event, ToolAwaiting, TurnError, TurnFinished, TurnStarted
from desktop.kernel.taskset import spawn
from desktop.session.session import SessionInfo
from desktop.ui.icons import TrayState, tray_icon

APP_TITLE = "Nanobot Tray"
MAX_LISTED_TASKS = 3
RECENT = 5  # chats in "Recent chats"
LONGEST_TITLE = 40  # characters of a chat's title in the menu


class Tray(QObject):
    new_chat = Signal()
    quick_prompt = Signal()
    show_chat = Signal()
    toggle_chat = Signal()  # left click on the icon
    settings = Signal()
    quit_requested = Signal()
    dnd_changed = Signal(bool)
    open_chat = Signal(str)  # a chat chosen under "Recent chats", by session key
    icon_replaced = Signal()  # `icon` is a new QSystemTrayIcon (see recreate_icon)

    def __init__(self, parent: QObject | None = None, title_of: Callable[[str], str] = str,
                 conversations: Conversations | None = None) -> None:
        """`title_of` names a chat by its session key (its title, as the sidebar shows it); `conversations` is
        what every chat is doing (reduced from the events before `on_event` hears them)."""
        super().__init__(parent)
        self.conversations = conversations if conversations is not None else Conversations()
        self.icon = QSystemTrayIcon(tray_icon(TrayState.IDLE), self)
        self.menu = QMenu()
        self._title_of = title_of
        self._attention = False
        self._model = ""
        self._state = TrayState.IDLE
        self.background_action: QAction = self.menu.addAction("")  # how many run: a line to read, not a choice
        self.background_action.setEnabled(False)
        self._background_separator = self.menu.addSeparator()
        self.menu.addAction("New chat").triggered.connect(self.new_chat.emit)
        self.quick_action: QAction = self.menu.addAction("Quick prompt")
        self.quick_action.triggered.connect(self.quick_prompt.emit)
        self.menu.addAction("Chat").triggered.connect(self.show_chat.emit)
        self.recent_menu: QMenu = self.menu.addMenu("Recent chats")
        self.recent_menu.addAction("No chats yet").setEnabled(False)
        self._list_chats: Callable[[], Awaitable[list[SessionInfo]]] | None = None
        self.menu.aboutToShow.connect(self._reload_recent)
        self._settings_action: QAction = self.menu.addAction("Settings")
        self._settings_action.triggered.connect(self.settings.emit)
        self.menu.addSeparator()
        self.dnd_action: QAction = self.menu.addAction("Do not disturb")
        self.dnd_action.setCheckable(True)
        self.dnd_action.toggled.connect(self.dnd_changed.emit)
        self.held_action: QAction = self.menu.addAction("")  # "3 notifications held", while there are any
        self.held_action.setEnabled(False)
        self.held_action.setVisible(False)
        self._held = 0
        self.menu.addSeparator()
        self.menu.addAction("Quit").triggered.connect(self.quit_requested.emit)
        self._wire(self.icon)
        self._refresh()

    @property
    def state(self) -> TrayState:
        return self._state

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def recreate_icon(self) -> None:
        """Qt binds an icon to XEmbed or StatusNotifierItem when it is created, so a tray host that
        appears later (e.g. GNOME's AppIndicator extension) needs a new icon object."""
        old, self.icon = self.icon, QSystemTrayIcon(tray_icon(self._state), self)
        self._wire(self.icon)
        self.icon.setToolTip(self.tooltip())
        old.hide()
        old.deleteLater()
        self.icon.show()
        self.icon_replaced.emit()

    def add_entry(self, label: str, chosen: Callable[[], None]) -> QAction:
        """A feature's menu entry, after those added before it and ahead of Settings."""
        action = QAction(label, self.menu)
        action.triggered.connect(lambda: chosen())
        self.menu.insertAction(self._settings_action, action)
        return action

    def set_quick_hotkey(self, chord: str) -> None:
        """Show the global hotkey that opens the quick prompt beside its entry ("" when none is bound)."""
        self.quick_action.setShortcut(QKeySequence.fromString(chord.replace("Super", "Meta"),
                                                              QKeySequence.SequenceFormat.PortableText))
        self.quick_action.setShortcutVisibleInContextMenu(True)

    def follow_chats(self, list_chats: Callable[[], Awaitable[list[SessionInfo]]]) -> None:
        """Fill "Recent chats" from `list_chats` (most recently active first), now and whenever it may change."""
        self._list_chats = list_chats
        self._reload_recent()

    def _reload_recent(self) -> None:
        if self._list_chats is not None:
            spawn(self._fill_recent(self._list_chats))

    async def _fill_recent(self, list_chats: Callable[[], Awaitable[list[SessionInfo]]]) -> None:
        chats = (await list_chats())[:RECENT]
        self.recent_menu.clear()
        for info in chats:
            title = info.title if len(info.title) <= LONGEST_TITLE else info.title[:LONGEST_TITLE - 1] + "…"
            # "&" would underline the next letter; after a tab Qt shows the rest apart, as a shortcut key
            action = self.recent_menu.addAction(title.replace("&", "&&").replace("\t", " "))
            action.triggered.connect(lambda _checked=False, key=info.key: self.open_chat.emit(key))
        if not chats:
            self.recent_menu.addAction("No chats yet").setEnabled(False)

    def set_model(self, model: str) -> None:
        self._model = model
        self._refresh()

    def set_dnd(self, on: bool) -> None:
        """Reflect a stored setting without announcing it as a user change."""
        self.dnd_action.blockSignals(True)
        self.dnd_action.setChecked(on)
        self.dnd_action.blockSignals(False)

    def set_held(self, count: int) -> None:
        """How many notifications Do not disturb holds (shown in the menu and the tooltip)."""
        self._held = count
        self.held_action.setText(held_text(count))
        self.held_action.setVisible(count > 0)
        self._refresh()

    def set_attention(self, on: bool) -> None:
        self._attention = on
        self._refresh()

    def on_event(self, event: Event) -> None:
        from desktop.subagents.events import BackgroundTasks  # not at the top: see Conversations.on_event

        if isinstance(event, (TurnStarted, TurnFinished)):
            self._reload_recent()  # a chat became the most recent, or got its title
        if (isinstance(event, (TurnStarted, TurnFinished, TurnError, BackgroundTasks, ToolAwaiting))
                # a running chat's later events refresh the tooltip: a new chat gets its title after it starts
                or getattr(event, "session_key", None) in self.conversations.running):
            self._refresh()

    def tooltip(self) -> str:
        running, failed = self.conversations.running, self.conversations.last_error  # failed: until a turn goes well
        asking = self.conversations.asking()
        background = [t.label for t in self.conversations.background_running]
        lines = [APP_TITLE, f"Model: {self._model or 'not configured'}"]
        if running:
            shown = ", ".join(self._title_of(key) for key in running[:MAX_LISTED_TASKS])
            more = f" and {len(running) - MAX_LISTED_TASKS} more" if len(running) > MAX_LISTED_TASKS else ""
            lines.append(f"Working on {len(running)}: {shown}{more}")
        if background:
            lines.append(f"Background tasks: {len(background)} ({', '.join(background[:MAX_LISTED_TASKS])}"
                         + (" …)" if len(background) > MAX_LISTED_TASKS else ")"))
        if not running and not background:
            lines.append("Idle")
        if asking:
            shown = ", ".join(self._title_of(key) for key in asking[:MAX_LISTED_TASKS])
            more = f" and {len(asking) - MAX_LISTED_TASKS} more" if len(asking) > MAX_LISTED_TASKS else ""
            lines.append(f"Waiting for your answer: {shown}{more}")
        if failed:
            lines.append(f"The last request failed: {failed}")
        if self._held:
            lines.append(held_text(self._held))
        if self._attention:
            lines.append("Something needs your attention")
        return "\n".join(lines)

    def _refresh(self) -> None:
        running, background = self.conversations.running, self.conversations.background_running
        failed = self.conversations.last_error
        state = (TrayState.ATTENTION if self._attention or failed or self.conversations.asking()
                 else TrayState.WORKING if running or background else TrayState.IDLE)
        if state != self._state or self.icon.icon().isNull():
            self.icon.setIcon(tray_icon(state))
            self._state = state
        tooltip = self.tooltip()
        if tooltip != self.icon.toolTip():
            self.icon.setToolTip(tooltip)
        count = len(background)
        self.background_action.setText(f"{count} background task{'s' if count != 1 else ''} running")
        self.background_action.setVisible(count > 0)
        self._background_separator.setVisible(count > 0)

    def _wire(self, icon: QSystemTrayIcon) -> None:
        icon.setContextMenu(self.menu)
        icon.activated.connect(self._activated)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.toggle_chat.emit()


def held_text(count: int) -> str:
    return f"{count} notification{'s' if count != 1 else ''} held"

"""The tray app: one QApplication whose event loop is a qasync loop that also runs the agent core.

Start-up order is what keeps it feeling instant: the tray icon appears first, the core is built on a
worker thread, and litellm (seconds to import) loads on another while the UI stays responsive. Windows
are imported and created the first time they are shown. This is the only place that wires qasync and
QTimers; everything else reacts to signals. The shell owns the conversation windows (chat, quick prompt,
Settings); every other window, tray entry and settings page comes from a feature's Qt half in UI_FEATURES
(desktop/ui/features.py), attached through the UiHost the shell implements (desktop/ui/host.py)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import qasync
from PySide6.QtCore import QEvent, QFileSystemWatcher, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMessageBox, QSystemTrayIcon, QWidget

from desktop.conversation.state import Conversations
from desktop.kernel.bus import Event
from desktop.kernel.notices import Notice, OpenChat, Target
from desktop.kernel.paths import Home, home
from desktop.kernel.taskset import TaskSet
from desktop.shell_state import ShellState, load_state, save_state, state_path
from desktop.ui.collector import GuiThreadCollector
from desktop.ui.features import UI_FEATURES
from desktop.ui.host import bring_to_front
from desktop.ui.hotkey import Hotkey, current_status
from desktop.ui.icons import install_theme_icons
from desktop.ui.notifier import Notifier
from desktop.ui.scheduler_timer import SchedulerTimer
from desktop.ui.single_instance import InstanceServer, InstanceUnresponsive, send_to_running, server_name
from desktop.ui.tray import Tray
from desktop.ui.window_manners import WindowManners

if TYPE_CHECKING:  # the core takes a while to import: it loads on a worker thread after the tray is up
    from desktop.core import Core
    from desktop.ui.bridge import CoreBridge
    from desktop.ui.chat.panel import ChatPanel
    from desktop.ui.chat.window import ChatWindow
    from desktop.ui.quick_prompt import QuickPrompt
    from desktop.ui.settings import SettingsWindow

log = logging.getLogger(__name__)
S = TypeVar("S")
T = TypeVar("T", bound=Target)
QUIT_GRACE = 2.0  # seconds running turns get to save on Quit
BUS_CLOSE_WITHIN = 2.0  # seconds for the D-Bus connection to close on Quit; a stuck bus is left behind
TRAY_RECHECK_MS = 5000
CONFIG_SETTLE_MS = 300
NO_TRAY_TEXT = (
    "Nanobot Tray could not find a system tray on this desktop, so the chat opens as a normal window.\n\n"
    "Everything else works: run nanobot-tray again to bring this window back, or bind "
    "“nanobot-tray --quick” to a key for the quick prompt. Closing this window quits the app while "
    "there is no tray. (On GNOME, the AppIndicator extension adds a tray; the app notices it.)")

TRAY_CLOSE_TITLE = "Nanobot Tray is still running"
TRAY_CLOSE_TEXT = "It keeps working in the tray. Click the tray icon to open the chat again; Quit is in its menu."


def request_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """What this launch asks for, in the form handed to a running instance."""
    quick = getattr(args, "quick", None)
    return {"action": "quick", "text": quick} if quick is not None else {"action": "show"}


def run_app(args: argparse.Namespace) -> int:
    """`nanobot-tray` with no subcommand: hand over to a running instance, or become it."""
    started = time.perf_counter()
    if logging.getLogger().level < logging.INFO:
        logging.getLogger("qasync").setLevel(logging.INFO)  # its DEBUG lines (one per thread call) drown -v
    h = home()
    request = request_from_args(args)
    name = server_name(h)
    try:
        if send_to_running(name, request) is not None:
            return 0
    except InstanceUnresponsive as exc:
        print(f"nanobot-tray: {exc}", file=sys.stderr)
        return 1
    if (sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM")
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))):
        print("nanobot-tray: no graphical session here (DISPLAY and WAYLAND_DISPLAY are unset). Start it from "
              "your desktop, or use `nanobot-tray agent` in a terminal.", file=sys.stderr)
        return 1
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("nanobot-tray")
    app.setApplicationDisplayName("Nanobot Tray")
    app.setDesktopFileName("nanobot-tray")
    app.setQuitOnLastWindowClosed(False)  # the app lives in the tray
    server = InstanceServer(name)
    if not server.listen():  # another instance won a start-up race: hand over to it after all
        return 0 if send_to_running(name, request) is not None else 1
    shell = Shell(app, h, server, request, started)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        return loop.run_until_complete(shell.run())


class StallMeter(QObject):
    """How late a 16 ms timer ticked at worst: how long the GUI thread could not run Python (or paint)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(16)
        self._timer.timeout.connect(self._tick)
        self._last = 0.0
        self.worst = 0.0

    def start(self) -> None:
        self._last, self.worst = time.perf_counter(), 0.0
        self._timer.start()

    def stop(self) -> float:
        self._tick()
        self._timer.stop()
        return self.worst

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self._last - self._timer.interval() / 1000)
        self._last = now


def _build_core(h: Home) -> Core:
    """Runs on a worker thread: the imports and the workspace set-up touch many files."""
    from desktop.core import build_core

    return build_core(h)


class Shell(QObject):
    """Owns the tray, the windows, notifications, the hotkey and the core for one app run."""

    def __init__(self, app: QApplication, h: Home, server: InstanceServer, first_request: dict[str, Any],
                 started: float) -> None:
        super().__init__()
        self.app, self.home, self.server = app, h, server
        self.started = started
        self.first_request = first_request
        self.core: Core | None = None
        self._bridge: CoreBridge | None = None  # once the core is built
        self.state = ShellState()
        self.tray_available = False
        self.exit_code = 0
        self._windows: dict[str, QWidget] = {}  # built so far, by kind
        self._builders: dict[str, Callable[[], QWidget]] = {"settings": self._build_settings}
        self._settings_pages: list[tuple[str, str, Callable[[], QWidget]]] = []
        self._chat_panels: list[Callable[[], ChatPanel]] = []
        self._targets: dict[type, Callable[[Any], None]] = {}
        self._ready: list[Callable[[], None]] = []
        self._chat: ChatWindow | None = None
        self._quick: QuickPrompt | None = None
        self._pending: list[dict[str, Any]] = []
        self.conversations = Conversations()  # what every chat is doing, reduced from the events once
        self._tasks = TaskSet("the shell")
        self._quit = asyncio.Event()
        self._state_written = asyncio.Lock()
        self._bound_hotkey = ""
        self._explanation: QMessageBox | None = None
        self.collector = GuiThreadCollector(self)  # Qt objects must never be freed on the model thread

        install_theme_icons()  # before the icon is shown: StatusNotifierItem hosts look it up by name
        self.tray = Tray(self, self._chat_title, self.conversations)
        self.tray.toggle_chat.connect(self.toggle_chat)
        self.tray.show_chat.connect(lambda: self.show_chat())
        self.tray.open_chat.connect(lambda key: self.show_chat(key))
        self.tray.new_chat.connect(self.new_chat)
        self.tray.quick_prompt.connect(lambda: self.open_quick())
        self.tray.settings.connect(lambda: self.open_window("settings"))
        self.tray.quit_requested.connect(self.quit_asked)
        self.tray.dnd_changed.connect(self._set_dnd)
        self.notifier = Notifier(self.tray.icon, self._notifications_enabled, self)
        self.notifier.activated.connect(self.open_target)
        self.notifier.held_changed.connect(self.tray.set_held)
        self.tray.icon_replaced.connect(lambda: self.notifier.attach(self.tray.icon))
        self.hotkey = Hotkey(self)
        self.manners = WindowManners(lambda: self.state, self._save_state, self)
        self.manners.settings_requested.connect(lambda: self.open_window("settings"))
        self.hotkey.activated.connect(lambda: self.open_quick())
        self.server.received.connect(self.handle)
        self.server.status = self.status
        self._tray_timer = QTimer(self)
        self._tray_timer.setInterval(TRAY_RECHECK_MS)
        self._tray_timer.timeout.connect(self._recheck_tray)
        self._config_timer = QTimer(self)
        self._config_timer.setSingleShot(True)
        self._config_timer.setInterval(CONFIG_SETTLE_MS)
        self._config_timer.timeout.connect(lambda: self.spawn(self._config_changed()))
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(lambda _path: self._config_timer.start())
        self._watcher.fileChanged.connect(lambda _path: self._config_timer.start())
        for feature in UI_FEATURES:
            feature.attach_ui(self)
        self.tray.show()
        log.info("tray icon shown %.3f s after launch", time.perf_counter() - started)

    # ----- lifetime
    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, self.quit)
            except (NotImplementedError, RuntimeError, AttributeError):  # Windows
                pass
        boot = self.spawn(self._boot())
        quitting = self.spawn(self._quit.wait())
        await asyncio.wait({boot, quitting}, return_when=asyncio.FIRST_COMPLETED)
        if boot.done() and not boot.cancelled() and boot.exception() is not None:
            exc = boot.exception()
            log.error("start-up failed", exc_info=exc)
            self.exit_code = 1
            box = QMessageBox(QMessageBox.Icon.Critical, "Nanobot Tray could not start",
                              f"{type(exc).__name__}: {exc}", QMessageBox.StandardButton.Close)
            box.finished.connect(self.quit)
            box.open()  # not exec(): a nested event loop inside a coroutine stalls the loop
            self._explanation = box
        await quitting
        boot.cancel()  # Quit during start-up: stop waiting for the rest of it
        await self._shutdown()
        return self.exit_code

    async def _boot(self) -> None:
        self.state = await asyncio.to_thread(load_state, state_path(self.home))
        self.tray.set_dnd(self.state.do_not_disturb)
        self.notifier.set_do_not_disturb(self.state.do_not_disturb)
        self.core = await asyncio.to_thread(_build_core, self.home)
        from desktop.ui.bridge import CoreBridge

        questions = self.core.questions  # the core asks; the approvals slice answers with cards and notifications
        questions.quiet = lambda: self.state.do_not_disturb
        self._bridge = CoreBridge(self.core, self, questions, self.conversations)
        self._bridge.event.connect(self.on_event)
        for ready in self._ready:
            ready()
        from desktop.cli.in_app import runner

        self.server.runner = runner(self.core)  # `nanobot-tray agent -m ...` now runs here (desktop/cli/remote.py)
        config = self.core.config
        self.tray.set_model(config.model)
        self.tray.follow_chats(self.bridge.list_chats)
        self.core.settings.subscribe("model", lambda _: self.tray.set_model(config.model))
        self.core.settings.subscribe("hotkey", lambda _: self._bind_hotkey(config.hotkey))
        await self.notifier.start()
        log.info("core ready %.3f s after launch", time.perf_counter() - self.started)
        self.tray_available = QSystemTrayIcon.isSystemTrayAvailable()
        self._tray_timer.start()
        self._watcher.addPaths([str(self.home.config_file.parent), str(self.home.config_file)])
        if self.core.settings.problems:
            self.notify(Notice("Settings file has problems", "\n".join(self.core.settings.problems[:3])))
        first, self.first_request = self.first_request, {}
        if first.get("action") == "quick":
            self.handle(first)
        elif not self.tray_available or not config.model:  # no tray, or first run: show the chat (onboarding)
            self.show_chat()
        for request in self._pending:
            self.handle(request)
        self._pending.clear()
        if not self.tray_available:
            self._explain_no_tray()
        await self._bind_hotkey(config.hotkey)
        await self._start_agent()

    async def _start_agent(self) -> None:
        """Let the agent take messages (queued ones wait meanwhile). The model library is not loaded here: the
        model helper holds it, started when a call is near (desktop/providers/helper.py)."""
        from desktop.scheduler import Scheduler  # loaded with the core, off the path to the tray icon

        assert self.core is not None
        meter = StallMeter(self)
        meter.start()
        self.core.get(Scheduler).timer = SchedulerTimer(self)
        await self.core.start()
        stall = meter.stop()
        log.info("agent ready %.3f s after launch (worst GUI stall %.0f ms while it started)",
                 time.perf_counter() - self.started, stall * 1000)
        self.quick_prompt(log_missing=False)  # built now so the hotkey shows it without delay
        self.collector.settle()

    def quit_asked(self) -> bool:
        """The person's Quit (the tray menu, or closing the chat when there is no tray); False when it waits. An
        open window that may hold edits not yet saved (memory, skills, settings) is closed first, as its own close
        would be: one holding some asks about them and stays, and so does the app (Quit again once answered). The
        chat and the quick prompt keep what is being written on disk, so they need not ask."""
        for kind, widget in self._windows.items():
            if kind in ("chat", "quick") or not widget.isVisible():
                continue
            widget.close()
            if widget.isVisible():
                bring_to_front(widget)
                return False
        self.quit()
        return True

    def quit(self) -> None:
        if not self._quit.is_set():
            log.info("quitting")
        self._quit.set()

    async def _shutdown(self) -> None:
        self.tray.hide()  # gone for the user at once; saving below may take a moment
        for widget in self._windows.values():
            widget.hide()
            widget.deleteLater()  # their timers must not fire into a closed event loop
        self._windows.clear()
        self._chat = self._quick = None
        await self._write_state(self._snapshot())  # where the windows were, before pending writes are cancelled
        self._tray_timer.stop()
        self._config_timer.stop()
        if self._watcher.files() or self._watcher.directories():
            self._watcher.removePaths(self._watcher.files() + self._watcher.directories())
        self.hotkey.stop()
        await self.server.stop_runs()
        if self.core is not None:
            await self.core.close(grace=QUIT_GRACE)
        await self._tasks.cancel_all()
        await asyncio.wait([asyncio.ensure_future(self.notifier.close())], timeout=BUS_CLOSE_WITHIN)
        if self._bridge is not None:
            self._bridge.close()
        self.server.close()
        self.collector.stop()
        log.info("quit cleanly")

    def spawn(self, coro: Any) -> asyncio.Future[Any]:
        return self._tasks.spawn(coro)

    # ----- what feature UIs see (desktop/ui/host.py)
    @property
    def bridge(self) -> CoreBridge:
        assert self._bridge is not None, "the core is not built yet"
        return self._bridge

    def get(self, service: type[S]) -> S:
        assert self.core is not None, "the core is not built yet"
        return self.core.get(service)

    def add_window(self, kind: str, build: Callable[[], QWidget], tray_label: str | None = None) -> None:
        self._builders[kind] = build
        if tray_label is not None:
            self.tray.add_entry(tray_label, lambda: self.open_window(kind))

    def add_settings_page(self, title: str, caption: str, build: Callable[[], QWidget]) -> None:
        self._settings_pages.append((title, caption, build))

    def add_chat_panel(self, build: Callable[[], ChatPanel]) -> None:
        self._chat_panels.append(build)

    def on_target(self, target: type[T], open_target: Callable[[T], None]) -> None:
        self._targets[target] = open_target

    def on_ready(self, ready: Callable[[], None]) -> None:
        self._ready.append(ready)

    def notify(self, note: Notice) -> None:
        """Show a notice: something to open means the person is wanted, so the icon says so until they open the
        app. A notice that goes stale (an approval question's) is left out: the tray shows the question itself
        while it waits, and a flag kept after it was answered, timed out or withdrawn would never clear."""
        self.notifier.notify(note)
        if note.target is not None and note.withdraw_when is None:
            self.tray.set_attention(True)

    def in_front(self, session_key: str) -> bool:
        """The chat shown in the active, unminimised chat window, or the quick prompt's on screen: a window
        behind another app's, or showing another chat, does not count."""
        chat, quick = self._chat, self._quick
        if (chat is not None and chat.isVisible() and not chat.isMinimized() and chat.isActiveWindow()
                and chat.current_key == session_key):
            return True
        return quick is not None and quick.isVisible() and quick.session_key == session_key

    # ----- requests from later launches
    def handle(self, request: dict[str, Any]) -> None:
        if self._bridge is None:  # still starting: act once the core exists
            self._pending.append(request)
            return
        action = request.get("action")
        if action == "show":
            self.show_chat()
        elif action == "quick":
            self.open_quick(str(request.get("text") or ""))
        elif action != "status":
            log.warning("ignored an unknown request from a later launch: %r", request)

    def status(self) -> dict[str, Any]:
        """Live details for `nanobot-tray doctor` while the app runs."""
        return {"pid": os.getpid(), "hotkey": current_status(self._bound_hotkey).message,
                "notifications": self.notifier.backend, "tray": self.tray_available}

    # ----- windows
    def window(self, kind: str, log_missing: bool = True) -> QWidget | None:
        """The window of this kind, imported and built on first use; None (with a log line) if unavailable."""
        if kind in self._windows:
            return self._windows[kind]
        if self._bridge is None:
            return None
        builders: dict[str, Callable[[], QWidget]] = {
            "chat": self._build_chat, "quick": self._build_quick, **self._builders}
        try:
            widget = builders[kind]()
        except Exception as exc:
            if log_missing:
                log.error("the %s window is not available: %s: %s", kind, type(exc).__name__, exc)
                self.notify(Notice("Window not available", f"The {kind} window is not available in this build."))
            return None
        self._windows[kind] = widget
        if kind != "quick":  # the quick prompt places itself
            self.manners.manage(kind, widget, closes_on_esc=kind != "chat")
        return widget

    def chat_window(self) -> ChatWindow | None:
        self.window("chat")
        return self._chat

    def quick_prompt(self, log_missing: bool = True) -> QuickPrompt | None:
        self.window("quick", log_missing)
        return self._quick

    def _build_chat(self) -> ChatWindow:
        from desktop.ui.chat.window import ChatWindow

        chat = ChatWindow(self.bridge, self._chat_panels)
        chat.installEventFilter(self)
        chat.settings_requested.connect(lambda: self.open_window("settings"))
        self._chat = chat
        return chat

    def _build_quick(self) -> QuickPrompt:
        from desktop.ui.quick_prompt import QuickPrompt

        quick = QuickPrompt(self.bridge)
        quick.open_in_chat.connect(lambda key, text, media: self.show_chat(key or None, text, media))
        quick.settings_requested.connect(lambda: self.open_window("settings"))
        self._quick = quick
        return quick

    def _build_settings(self) -> SettingsWindow:
        from desktop.tools import Tools
        from desktop.ui.settings import SettingsWindow

        return SettingsWindow(self.bridge, self._settings_pages, self.get(Tools))

    def show_chat(self, session: str | None = None, text: str = "", media: list[str] | None = None) -> None:
        """Bring the chat window up, on `session` if given, and send `text` and the files `media` there if any."""
        chat = self.chat_window()
        if chat is None:
            return
        if session:
            chat.show_session(session)
            if text or media:
                chat.send(text, list(media or []))
        bring_to_front(chat)
        chat.focus_input()
        self.tray.set_attention(False)

    def open_target(self, target: Target | None) -> None:
        """A clicked notification: what a feature said its target opens (a Dream commit: the memory viewer on
        it), else a chat, at the message the notification is about when it names one."""
        opener = self._targets.get(type(target))
        if opener is not None:
            opener(target)
            return
        at_message = isinstance(target, OpenChat) and target.message is not None
        # show_message opens the chat itself (first reading it again when needed): open it only once
        self.show_chat(target.session_key if isinstance(target, OpenChat) and not at_message else None)
        if at_message and self._chat is not None:
            assert isinstance(target, OpenChat) and target.message is not None
            self._chat.show_message(target.session_key, target.message)

    def toggle_chat(self) -> None:
        """The tray icon's click: put the chat away when it is the window in use, else bring it up (a chat
        covered by another app is raised and focused, not hidden out of sight)."""
        chat = self._chat
        if chat is not None and chat.isVisible() and not chat.isMinimized() and chat.isActiveWindow():
            chat.hide()
        else:
            self.show_chat()

    def new_chat(self) -> None:
        chat = self.chat_window()
        if chat is not None:
            chat.new_chat()
            self.show_chat()

    def open_quick(self, text: str = "") -> None:
        quick = self.quick_prompt()
        if quick is not None:
            quick.popup(text)

    def open_window(self, kind: str) -> None:
        widget = self.window(kind)
        if widget is not None:
            bring_to_front(widget)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        """Without a tray there is no other way back to the app, so closing the chat quits it as the tray's Quit
        would (a window with edits not saved asks first, and the app and the chat stay); with one, the first close
        says where the app went."""
        if event.type() != QEvent.Type.Close or watched is not self._chat:
            return False
        if not QSystemTrayIcon.isSystemTrayAvailable():  # asked now: a tray may have just appeared
            log.info("the chat window was closed and there is no tray: quitting")
            if not self.quit_asked():  # a window asks about its edits: the chat stays, the one way back to the app
                event.ignore()
                return True
        elif not self.state.tray_close_explained:
            self._explain_tray_close()
        return False

    # ----- agent events and notifications
    def on_event(self, event: Event) -> None:
        if isinstance(event, Notice):  # a feature telling the person something
            self.notify(event)
            return
        self.tray.on_event(event)

    def _chat_title(self, session_key: str) -> str:
        return self._bridge.session_title(session_key) if self._bridge is not None else session_key

    def _notifications_enabled(self) -> bool:
        return self.core is None or self.core.config.notifications

    def _snapshot(self) -> ShellState:
        return dataclasses.replace(self.state, windows=dict(self.state.windows))  # the thread writes a copy

    def _save_state(self) -> None:
        self.spawn(self._write_state(self._snapshot()))

    async def _write_state(self, snapshot: ShellState) -> None:
        async with self._state_written:  # in order: an older snapshot must never land after a newer one
            await asyncio.to_thread(save_state, state_path(self.home), snapshot)

    def _set_dnd(self, on: bool) -> None:
        self.state.do_not_disturb = on
        self.notifier.set_do_not_disturb(on)
        self._save_state()

    # ----- hotkey, settings, tray host
    async def _bind_hotkey(self, chord: str) -> None:
        self._bound_hotkey = chord
        status = await self.hotkey.bind(chord)
        self.tray.set_quick_hotkey(chord if status.active else "")
        if not status.active and status.backend != "none":
            self.notify(Notice("Global hotkey unavailable", f"{status.message}\n{status.hint}"))

    async def _config_changed(self) -> None:
        """config.yaml changed (an editor, another process, or our own save): the settings writer reads it
        and tells the parts that follow a changed key (model, hotkey, tools, Dream, ...)."""
        path = str(self.home.config_file)
        if path not in self._watcher.files() and self.home.config_file.exists():
            self._watcher.addPath(path)  # an atomic replace drops the watch on the old file
        if self.core is None:
            return
        before = list(self.core.settings.problems)
        await self.core.settings.reload()
        problems = self.core.settings.problems
        if problems and problems != before:
            self.notify(Notice("Settings file has problems", "\n".join(problems[:3])))

    def _recheck_tray(self) -> None:
        available = QSystemTrayIcon.isSystemTrayAvailable()
        if available and not self.tray_available:
            log.info("a system tray appeared; the app now lives there")
            self.tray.recreate_icon()
        self.tray_available = available

    def _explain_tray_close(self) -> None:
        """Once per home, the first time the chat is closed: the app did not quit. Said by a notification (a
        dialog on close would be one more window to close). While none can be shown now (Do not disturb, which
        would hold it for later, or notifications off), a later close says it."""
        if self.state.do_not_disturb:
            return
        if self.notifier.notify(Notice(TRAY_CLOSE_TITLE, TRAY_CLOSE_TEXT)):
            self.state.tray_close_explained = True
            self._save_state()

    def _explain_no_tray(self) -> None:
        """Once per home: say why the chat opened as a window and how to get back to it."""
        if self.state.no_tray_explained:
            return
        self.state.no_tray_explained = True
        self._save_state()
        box = QMessageBox(QMessageBox.Icon.Information, "No system tray", NO_TRAY_TEXT,
                          QMessageBox.StandardButton.Ok, self._chat)
        box.open()  # not exec(): a nested event loop would stall the agent
        self._explanation = box


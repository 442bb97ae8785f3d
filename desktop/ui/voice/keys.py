"""The dictation key (`hotkeys.dictate`): press to start, press again to stop; or hold it while speaking and
let go to stop (X11, where the key's release is seen). The recording goes into the chat's message box when
the chat window is the one in front, else into the quick prompt, which opens for it.

Grabbed on X11 only, like the other desktop-context keys (desktop/ui/context): a key another program holds is
reported in a notification saying which and where to change it."""

from __future__ import annotations

import logging
import time

from desktop.context.settings import HotkeysConfig
from desktop.kernel.notices import Notice
from desktop.kernel.taskset import TaskSet
from desktop.ui.host import UiHost
from desktop.ui.voice.dictate import Dictate
from desktop.voice import Voice
from desktop.voice.dictation import Dictation, Phase

log = logging.getLogger(__name__)
HOLD_SECONDS = 0.4  # held at least this long, letting go stops the recording; a tap leaves it running


class VoiceKeys:
    """The key, bound now and again whenever the hotkeys' settings change."""

    def __init__(self, host: UiHost) -> None:
        from desktop.ui.hotkey import Hotkey, detect_backend

        self.host = host
        self._voice = host.get(Voice)
        self._x11 = detect_backend() == "x11"
        self._tasks = TaskSet("dictation key")
        self.hotkey = Hotkey(main=False)
        self.hotkey.activated.connect(self.pressed)
        self.hotkey.released.connect(self.released)
        self._pressed_at: float | None = None  # the press that started the recording, for a hold
        self._started: Dictation | None = None

    def start(self) -> None:
        if not self._x11:
            log.info("the dictation hotkey is X11 only; the microphone buttons offer the same")
            return
        self.host.bridge.settings.subscribe("hotkeys", lambda _keys: self._tasks.spawn(self.bind()))
        self._tasks.spawn(self.bind())

    async def bind(self) -> None:
        status = await self.hotkey.bind(self.host.bridge.settings.config.section(HotkeysConfig).dictate)
        if not status.active and status.backend != "none":
            self.host.notify(Notice("Hotkey for dictation unavailable",
                                    f"{status.message}\nChange it under Settings → Desktop context."))

    def pressed(self) -> None:
        running = self._voice.active or (self._started if self._started is not None
                                         and self._started.phase is Phase.OPENING else None)
        self._pressed_at = None
        if running is not None:
            running.toggle()  # the second press stops it, wherever it was started
            return
        target = self._target()
        if target is None:
            return
        self._started = target.session
        self._pressed_at = time.monotonic()
        target.toggle()

    def released(self) -> None:
        held = self._pressed_at is not None and time.monotonic() - self._pressed_at >= HOLD_SECONDS
        self._pressed_at = None
        if held and self._started is not None and self._started.phase in (Phase.OPENING, Phase.RECORDING):
            self._started.toggle()

    def _target(self) -> Dictate | None:
        """The chat's microphone when the chat window is in front, else the quick prompt's (shown)."""
        from PySide6.QtWidgets import QApplication

        from desktop.ui.chat.window import ChatWindow
        from desktop.ui.quick_prompt import QuickPrompt

        chat = QApplication.activeWindow()
        if isinstance(chat, ChatWindow) and not chat.isMinimized() and chat.composer.dictate is not None:
            return chat.composer.dictate
        quick = self.host.window("quick")
        if not isinstance(quick, QuickPrompt):
            return None
        if not quick.isVisible():
            quick.popup()
        return quick.dictate

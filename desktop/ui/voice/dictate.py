"""Dictation in a message box: the microphone button beside the `+`, and a strip over the box that says what is
happening. While recording the button turns red and the strip shows a red dot, the time and a level meter, with
Stop and Cancel; then "Transcribing…"; then the text lands in the box (or is sent, with `voice.send_on_stop`).
A problem stays in the strip in red, with Open Settings when its cure is there, until dismissed.

The quick prompt and the chat's composer each hold one `Dictate` and place its `button` and `bar`; the text
comes out of `heard`. Hiding the window while it records drops the recording: nothing records unseen."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.context.settings import HotkeysConfig
from desktop.kernel.taskset import spawn
from desktop.ui.bridge import CoreBridge
from desktop.ui.voice import offered
from desktop.ui.voice.look import RECORDING_RED, LevelMeter, mic_icon
from desktop.voice.dictation import Dictation, Phase
from desktop.voice.settings import VoiceConfig

TICK_MS = 40  # the meter's and the clock's pace while recording
STYLE = f"""
#dictation {{ border: 1px solid palette(midlight); border-radius: 6px; background: palette(base); }}
#dictation[recording="true"] {{ border: 1px solid {RECORDING_RED}; }}
#dictation #dot {{ color: {RECORDING_RED}; }}
#dictation #what[recording="true"] {{ color: {RECORDING_RED}; font-weight: bold; }}
#dictation #what[error="true"] {{ color: #c0392b; }}
#dictation #device {{ color: palette(placeholder-text); }}
#dictation QToolButton {{ border: none; padding: 0 4px; }}
"""


class Dictate(QObject):
    heard = Signal(str, bool)  # the text, and whether to send it at once (voice.send_on_stop)
    changed = Signal()  # the strip came, went or changed size: the window fits itself again
    settings_requested = Signal()  # Open Settings on a problem whose cure is there

    def __init__(self, bridge: CoreBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._session: Dictation | None = None  # made on the first click, when the core is surely there
        self._watched: QWidget | None = None  # the window whose hiding stops a recording

        self.button = QToolButton()
        self.button.setAutoRaise(True)
        self.button.setCheckable(True)
        self.button.clicked.connect(lambda _checked: self.toggle())

        self.bar = QWidget()  # what the window places (its margins are the window's to set)
        self.strip = QFrame()
        self.strip.setObjectName("dictation")
        self.strip.setStyleSheet(STYLE)
        holder = QVBoxLayout(self.bar)
        holder.setContentsMargins(0, 0, 0, 0)
        holder.addWidget(self.strip)
        self.dot = QLabel("●")
        self.dot.setObjectName("dot")
        self.what = QLabel()
        self.what.setObjectName("what")
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.device = QLabel()
        self.device.setObjectName("device")
        self.meter = LevelMeter()
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop recording and turn what you said into text")
        self.stop_button.clicked.connect(lambda: spawn(self.session.stop()))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop recording and drop it: nothing is sent")
        self.cancel_button.clicked.connect(lambda: spawn(self.session.cancel()))
        self.settings_button = QPushButton("Open Settings")
        self.settings_button.clicked.connect(self._open_settings)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss")
        self.dismiss_button.clicked.connect(lambda: self.session.dismiss())
        row = QHBoxLayout(self.strip)
        row.setContentsMargins(8, 4, 4, 4)
        row.setSpacing(8)
        row.addWidget(self.dot)
        row.addWidget(self.what, 1)
        row.addWidget(self.device)
        row.addWidget(self.meter, 1)
        for button in (self.stop_button, self.cancel_button, self.settings_button, self.dismiss_button):
            row.addWidget(button)
        self._timer = QTimer(self)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(self._tick)
        self._show()

    @property
    def session(self) -> Dictation:
        if self._session is None:
            self._session = offered().dictation(self._show, self._heard)
        return self._session

    def toggle(self) -> None:
        """Start or stop (the button, the hotkey): only a person's action opens the microphone."""
        self._watch_window()
        self.session.toggle()
        self._show()

    # ----- what the session reports
    def _heard(self, text: str) -> None:
        self.heard.emit(text, self._bridge.settings.config.section(VoiceConfig).send_on_stop)

    def _show(self) -> None:
        session = self._session
        phase, problem = (session.phase, session.problem) if session is not None else (Phase.IDLE, None)
        recording = phase in (Phase.OPENING, Phase.RECORDING)
        self.button.setChecked(recording)
        self.button.setEnabled(phase is not Phase.TRANSCRIBING)
        self.button.setIcon(mic_icon(self.button.palette().buttonText().color(), recording=recording))
        key = self._voice_key()
        self.button.setToolTip(f"Stop recording ({key})" if recording else
                               f"Dictate: say your message, it becomes text ({key})")
        if phase is Phase.OPENING:
            text = "Opening the microphone…"
        elif phase is Phase.RECORDING:
            text = self._clock()
        elif phase is Phase.TRANSCRIBING:
            text = "Transcribing…"
        else:
            text = str(problem) if problem is not None else ""
        self.what.setText(text)
        self.what.setWordWrap(problem is not None and phase is Phase.IDLE)
        _mark(self.what, recording=recording, error=problem is not None and phase is Phase.IDLE)
        _mark(self.strip, recording=recording, error=False)
        self.dot.setVisible(recording)
        self.device.setText(session.device if session is not None and phase is Phase.RECORDING else "")
        self.device.setVisible(phase is Phase.RECORDING)
        self.meter.setVisible(phase is Phase.RECORDING)
        self.stop_button.setVisible(recording)
        self.cancel_button.setVisible(phase is Phase.RECORDING)
        self.settings_button.setVisible(phase is Phase.IDLE and problem is not None and problem.fix_in_settings)
        self.dismiss_button.setVisible(phase is Phase.IDLE and problem is not None)
        self.bar.setVisible(bool(text))
        if phase is Phase.RECORDING:
            self._timer.start()
        else:
            self._timer.stop()
            self.meter.reset()
        self.changed.emit()

    def _tick(self) -> None:
        self.meter.show_level(self.session.level)
        self.what.setText(self._clock())

    def _clock(self) -> str:
        seconds = int(self.session.seconds)
        return f"Recording  {seconds // 60}:{seconds % 60:02d}"

    def _voice_key(self) -> str:
        return self._bridge.settings.config.section(HotkeysConfig).dictate

    def _open_settings(self) -> None:
        """Settings, on its Voice page: the window asks the app for Settings, then the page is picked."""
        from desktop.ui.settings import show_settings_page

        self.session.dismiss()
        self.settings_requested.emit()
        show_settings_page("Voice")

    # ----- nothing records unseen
    def _watch_window(self) -> None:
        window = self.button.window()
        if window is not self._watched and window is not None:
            if self._watched is not None:
                self._watched.removeEventFilter(self)
            window.installEventFilter(self)
            self._watched = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        session = self._session
        if watched is self._watched and event.type() == QEvent.Type.Hide and session is not None \
                and session.phase is Phase.RECORDING:
            spawn(session.cancel())
        return False


def _mark(widget: QWidget, *, recording: bool, error: bool) -> None:
    """Set the style sheet's properties and have them drawn now."""
    widget.setProperty("recording", recording)
    widget.setProperty("error", error)
    style = widget.style() or QApplication.style()
    style.unpolish(widget)
    style.polish(widget)

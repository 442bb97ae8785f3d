"""Reading answers aloud in the chat window: with `voice.read_aloud` on, a speaker button in the toolbar over a
hovered answer ("Read aloud"), which turns into Stop while that answer is read; and a strip over the message
box while anything is read ("Reading aloud: “…”", with Stop) or when it could not be (the problem in red, with
Open Settings when its cure is there).

One answer is read at a time (the Voice service's ReadAloud): reading another stops the first. Hiding the chat
window (closing it) stops the reading; minimising it does not."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from desktop.conversation.transcript import ChatRow, Kind
from desktop.kernel.taskset import spawn
from desktop.ui.chat.panel import ChatPanel
from desktop.ui.voice.look import speaker_icon
from desktop.voice import Voice
from desktop.voice.reading import NO_WAY, Phase

PREVIEW = 60  # characters of the answer shown in the strip while it is read
STYLE = """
#readAloud { border: 1px solid palette(midlight); border-radius: 6px; background: palette(base); }
#readAloud #what[error="true"] { color: #c0392b; }
#readAloud QToolButton { border: none; padding: 0 4px; }
"""


class ReadAloudStrip(ChatPanel):
    def __init__(self, voice: Voice, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readAloud")
        self.setStyleSheet(STYLE)
        self._voice = voice
        self._reader = voice.reader
        self._row: ChatRow | None = None  # the answer the toolbar is over
        self._watched: QWidget | None = None  # the window whose closing stops the reading

        self.speaker = QToolButton()  # the row toolbar's; placed by the chat window
        self.speaker.setAutoRaise(True)
        self.speaker.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.speaker.clicked.connect(self._clicked)
        self.speaker.setText("Read aloud")
        wide = self.speaker.sizeHint().width()
        self.speaker.setText("Stop")
        self.speaker.setMinimumWidth(max(wide, self.speaker.sizeHint().width()))  # the toolbar keeps its size

        self.icon = QLabel()
        self.what = QLabel()
        self.what.setObjectName("what")
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop reading aloud")
        self.stop_button.clicked.connect(lambda: spawn(self._reader.stop()))
        self.settings_button = QPushButton("Open Settings")
        self.settings_button.clicked.connect(self._open_settings)
        self.dismiss_button = QToolButton()
        self.dismiss_button.setText("✕")
        self.dismiss_button.setToolTip("Dismiss")
        self.dismiss_button.clicked.connect(self._reader.dismiss)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        row.setSpacing(8)
        row.addWidget(self.icon)
        row.addWidget(self.what, 1)
        for button in (self.stop_button, self.settings_button, self.dismiss_button):
            row.addWidget(button)
        self.destroyed.connect(self._reader.watch(self._show))  # no calls into a deleted strip
        self._show()

    # ----- the chat window's questions
    def show_session(self, key: str) -> None:
        """A reading goes on in whichever chat is shown."""

    def row_button(self) -> QToolButton:
        return self.speaker

    def offer_row(self, row: ChatRow) -> bool:
        self._row = row
        self._show_button()
        voice = self._voice.settings
        offered = row.kind is Kind.ASSISTANT and voice.read_aloud
        if offered and not voice.tts_model:
            spawn(self._reader.look_for_dispatcher())  # installed meanwhile? The tooltip follows.
        return offered

    # ----- the person
    def _clicked(self) -> None:
        row = self._row
        if row is None:
            return
        self._watch_window()
        self._reader.toggle(row.uid, row.text)

    def _open_settings(self) -> None:
        """Settings, on its Voice page: the window asks the app for Settings, then the page is picked."""
        from desktop.ui.settings import show_settings_page

        self._reader.dismiss()
        self.settings_requested.emit()
        show_settings_page("Voice")

    # ----- what the reader reports
    def _show(self) -> None:
        reader = self._reader
        problem = reader.problem if reader.phase is Phase.IDLE else None
        colour = self.palette().windowText().color()
        self.icon.setPixmap(speaker_icon(colour).pixmap(16, 16))
        self.icon.setVisible(problem is None)
        if reader.phase is Phase.PREPARING:
            model = self._voice.settings.tts_model
            text = f"Asking {model} to read the answer…" if model else "Starting speech-dispatcher…"
        elif reader.phase is Phase.SPEAKING:
            words = " ".join(reader.text.split())
            if len(words) > PREVIEW:
                words = words[:PREVIEW].rsplit(" ", 1)[0] + "…"
            text = f"Reading aloud: “{words}”"
        else:
            text = str(problem) if problem is not None else ""
        self.what.setText(text)
        self.what.setWordWrap(problem is not None)
        self.what.setProperty("error", problem is not None)
        style = self.what.style() or QApplication.style()
        style.unpolish(self.what)
        style.polish(self.what)
        self.stop_button.setVisible(reader.phase is not Phase.IDLE)
        self.settings_button.setVisible(problem is not None and problem.fix_in_settings)
        self.dismiss_button.setVisible(problem is not None)
        self.setVisible(bool(text))
        self._show_button()

    def _show_button(self) -> None:
        row = self._row
        reading = row is not None and self._reader.reading(row.uid)
        self.speaker.setIcon(speaker_icon(self.speaker.palette().buttonText().color(), speaking=reading))
        self.speaker.setText("Stop" if reading else "Read aloud")
        self.speaker.setToolTip("Stop reading aloud" if reading else self._how())

    def _how(self) -> str:
        """How the button would read: said before it is clicked."""
        voice = self._voice.settings
        if voice.tts_model:
            how = f"{voice.tts_model}, voice {voice.tts_voice}" if voice.tts_voice else voice.tts_model
            return f"Read this answer aloud ({how})"
        if self._reader.dispatcher:
            return "Read this answer aloud with the computer's own voice (speech-dispatcher)"
        return NO_WAY

    # ----- nothing goes on speaking from a closed window
    def _watch_window(self) -> None:
        window = self.window()
        if window is not self._watched and window is not None:
            if self._watched is not None:
                self._watched.removeEventFilter(self)
            window.installEventFilter(self)
            self._watched = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._watched and event.type() == QEvent.Type.Hide and isinstance(watched, QWidget) \
                and not watched.isMinimized() and self._reader.phase is not Phase.IDLE:
            spawn(self._reader.stop())
        return False

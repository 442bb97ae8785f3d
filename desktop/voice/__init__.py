"""Dictation: what the person says into the microphone becomes the text of a message; and reading answers aloud.

This half is Qt-free: the `voice` settings (settings.py), recording from the default input (recorder.py,
PortAudio through sounddevice, imported on the first recording: portaudio.py), turning a recording into text
with litellm and the configured speech model (transcribe.py; server.py has what it shares with reading aloud),
and one message box's dictation from press to text (dictation.py). Reading aloud: an answer's Markdown as words
(spoken.py), made into sound by the read-aloud model (speak.py) and played (player.py), or said by
speech-dispatcher (dispatcher.py); the answer being read, from click to stop (reading.py). The microphone and
speaker buttons, the level meter and the `hotkeys.dictate` key are desktop/ui/voice/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from desktop.kernel.host import Feature, Host
from desktop.voice.dictation import Dictation, Phase
from desktop.voice.player import Sound
from desktop.voice.reading import ReadAloud
from desktop.voice.recorder import Recording
from desktop.voice.settings import SECTION, VoiceConfig
from desktop.voice.speak import synthesize
from desktop.voice.transcribe import transcribe


class Voice:
    """The feature's service: its settings in force, the recording running now (there is one microphone), the
    answer read aloud now (there is one pair of speakers), and the speech models with the app's key lookup."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.active: Dictation | None = None  # the dictation recording now, if any
        self.reader = ReadAloud(self)
        host.on_close(self._close)

    @property
    def settings(self) -> VoiceConfig:
        return self._host.config.section(VoiceConfig)

    @property
    def workspace(self) -> Path:
        """Where no program the feature starts may come from (desktop/workspace/programs.py)."""
        return self._host.workspace

    def dictation(self, changed: Callable[[], None], heard: Callable[[str], None]) -> Dictation:
        """A message box's own dictation (desktop/voice/dictation.py)."""
        return Dictation(self, changed, heard)

    async def transcribe(self, recording: Recording) -> str:
        return await transcribe(recording, self.settings, self._host.provider, self._host.config.provider.timeout)

    async def speech(self, text: str, voice: VoiceConfig) -> Sound:
        return await synthesize(text, voice, self._host.provider, self._host.config.provider.timeout)

    async def _close(self) -> None:
        """Quitting mid-recording closes the microphone, and nothing is sent; a reading aloud stops."""
        if self.active is not None and self.active.phase is Phase.RECORDING:
            await self.active.cancel()
        await self.reader.stop()


FEATURE = Feature("voice", Voice, Voice, settings=SECTION)

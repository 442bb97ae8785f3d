"""Recording from the default input device, through PortAudio (the `sounddevice` package).

sounddevice is imported on the first recording, in a worker thread, and PortAudio is asked for the devices
again once when no input device is found or the default one does not open (desktop/voice/portaudio.py).

Sound comes as 16-bit mono at 16 kHz, what speech models work at (a device that cannot record at that rate
records at its own). It is kept in memory only, for as long as the recording runs and is sent, never written
to a file."""

from __future__ import annotations

import asyncio
import io
import logging
import math
import wave
from array import array
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from desktop.voice import portaudio
from desktop.voice.problems import VoiceError

log = logging.getLogger(__name__)

RATE = 16_000  # Hz: speech models resample to this anyway, so more would only make the upload bigger
BLOCK_SECONDS = 0.05  # the level meter's pace
STOP_WITHIN = 5.0  # seconds a device gets to stop
FLOOR_DB = -60.0  # the meter's empty end: quieter than this is silence here


@dataclass(frozen=True)
class Recording:
    """What was recorded: raw 16-bit mono samples at `rate`."""

    pcm: bytes
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / 2 / self.rate

    def wav(self) -> bytes:
        """The samples as a WAV file, the one format every speech server reads."""
        out = io.BytesIO()
        with wave.open(out, "wb") as sound:
            sound.setnchannels(1)
            sound.setsampwidth(2)
            sound.setframerate(self.rate)
            sound.writeframes(self.pcm)
        return out.getvalue()


def level_of(block: bytes) -> float:
    """How loud a block of 16-bit samples is, 0 (silence, FLOOR_DB and below) to 1 (full scale): its peak in
    decibels, so speech at a normal distance fills most of the meter."""
    samples = array("h")
    samples.frombytes(block[:len(block) - len(block) % 2])
    if not samples:
        return 0.0
    peak = max(max(samples), -min(samples))
    if peak <= 0:
        return 0.0
    db = 20 * math.log10(peak / 32768)
    return min(1.0, max(0.0, (db - FLOOR_DB) / -FLOOR_DB))


class Recorder:
    """One recording from the default input: `start`, then `stop` for what was heard (or `discard`). `level`
    and `seconds` may be read from any thread while it runs; at `max_seconds` it keeps no more (`full`)."""

    def __init__(self, max_seconds: float) -> None:
        self.max_seconds = max_seconds
        self.device = ""  # the input's name, once open
        self._stream: Any = None
        self._chunks: list[bytes] = []
        self._frames = 0
        self._rate = RATE
        self._level = 0.0
        self.loudest = 0.0  # the loudest moment so far: 0 means the input gave only silence
        self._full = False

    @property
    def level(self) -> float:
        return self._level

    @property
    def seconds(self) -> float:
        return self._frames / self._rate

    @property
    def full(self) -> bool:
        return self._full or self.seconds >= self.max_seconds

    async def start(self) -> None:
        """Open the default input and start recording. Raises VoiceError saying why there is no microphone."""
        await asyncio.to_thread(self._open)

    async def stop(self) -> Recording:
        """Stop recording; what was heard. PortAudio hands over what the device still holds first (a sound
        server may hold a second or two); a device that never answers is left behind after STOP_WITHIN."""
        await self._stop()
        return Recording(b"".join(list(self._chunks)), self._rate)

    async def discard(self) -> None:
        await self._stop()
        self._chunks.clear()

    async def _stop(self) -> None:
        try:
            async with asyncio.timeout(STOP_WITHIN):
                await asyncio.to_thread(self._close)
        except TimeoutError:
            log.warning("the microphone (%s) did not stop within %g s; going on with what it gave",
                        self.device, STOP_WITHIN)
            self._full = True  # nothing more is kept, should it wake up

    # ----- on a worker thread
    def _open(self) -> None:
        self._stream = portaudio.open_stream(self._open_default, "Recording")
        log.info("recording from %s at %d Hz", self.device, self._rate)

    def _open_default(self, sd: ModuleType) -> Any:
        try:
            info = sd.query_devices(kind="input")
        except (sd.PortAudioError, ValueError) as exc:
            log.info("no default input device: %s", exc)
            raise VoiceError("No microphone found: PortAudio sees no sound input device on this computer. Plug "
                             "one in, or check the sound settings.") from exc
        self.device = str(info.get("name") or "the default input")
        try:
            sd.check_input_settings(samplerate=RATE, channels=1, dtype="int16")
            self._rate = RATE
        except (sd.PortAudioError, ValueError):
            self._rate = int(info.get("default_samplerate") or 48_000)  # the device's own rate
        try:
            stream = sd.RawInputStream(samplerate=self._rate, channels=1, dtype="int16",
                                       blocksize=int(self._rate * BLOCK_SECONDS), callback=self._heard)
            stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise VoiceError(f"The microphone ({self.device}) could not be opened{portaudio.reason(exc)}. Is another "
                             "program holding it?") from exc
        return stream

    def _heard(self, data: Any, frames: int, _time: Any, _status: Any) -> None:
        """PortAudio's thread, every block: keep it (until full) and note how loud it was."""
        block = bytes(data)
        self._level = level_of(block)
        self.loudest = max(self.loudest, self._level)
        if not self.full:
            self._chunks.append(block)
            self._frames += frames

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        self._level = 0.0
        if stream is None:
            return
        try:
            stream.stop()
            stream.close()
        except Exception:  # the device went away meanwhile: what was heard is kept all the same
            log.warning("closing the microphone failed", exc_info=True)
        portaudio.closed()


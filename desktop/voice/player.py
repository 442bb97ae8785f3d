"""Playing a speech model's answer on the default output, through PortAudio (desktop/voice/portaudio.py), off
the GUI thread: the device is opened, fed and closed on PortAudio's and worker threads, and a stop cuts the
sound at once (what the device still holds is dropped, not played out).

The answer is a WAV file, the one format every OpenAI-style speech server gives; OpenAI's own is streamed and
says in its header that it has no end, which the wave module reads to the end of the data all the same."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import wave
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from desktop.voice import portaudio
from desktop.voice.problems import VoiceError

log = logging.getLogger(__name__)

SAMPLE_TYPES = {1: "uint8", 2: "int16", 3: "int24", 4: "int32"}  # WAV's sample widths as PortAudio names them
END_GRACE = 5.0  # seconds past a sound's length before a device that never says it has finished is left
CLOSE_WITHIN = 5.0  # seconds a device gets to stop


@dataclass(frozen=True)
class Sound:
    """Interleaved PCM samples, `width` bytes each."""

    pcm: bytes
    rate: int
    channels: int
    width: int

    @property
    def seconds(self) -> float:
        return len(self.pcm) / (self.rate * self.channels * self.width)

    @classmethod
    def from_wav(cls, data: bytes) -> Sound:
        """Raises ValueError saying what is wrong with it."""
        try:
            with wave.open(io.BytesIO(data)) as sound:
                rate, channels, width = sound.getframerate(), sound.getnchannels(), sound.getsampwidth()
                pcm = sound.readframes(sound.getnframes())
        except (wave.Error, EOFError) as exc:
            start = data[:16].decode("utf-8", "replace").strip()
            raise ValueError(f"not a WAV file ({exc}; it begins {start!r})") from exc
        if width not in SAMPLE_TYPES or not rate or not channels:
            raise ValueError(f"a WAV file of {width * 8}-bit samples at {rate} Hz, which cannot be played")
        frame = channels * width
        return cls(pcm[:len(pcm) - len(pcm) % frame], rate, channels, width)


class Player:
    """One sound on the default output: `play` returns once it has been heard to the end, or at once when the
    task awaiting it is cancelled."""

    def __init__(self) -> None:
        self.device = ""  # the output's name, once open
        self._stream: Any = None
        self._pcm = memoryview(b"")
        self._position = 0
        self._silence = b"\0"
        self._ended: type[BaseException] = StopIteration  # sounddevice's CallbackStop, once loaded

    async def play(self, sound: Sound, started: Callable[[], None] = lambda: None) -> None:
        """`started()` is called once the output is open and playing. Raises VoiceError when there is no output
        to play it on."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def end() -> None:
            if not finished.done():
                finished.set_result(None)

        def done() -> None:  # PortAudio's thread, once the last sample has been played (or the stream aborted)
            with contextlib.suppress(RuntimeError):  # the loop is gone: the app has quit
                loop.call_soon_threadsafe(end)

        opening = asyncio.ensure_future(asyncio.to_thread(self._open, sound, done))
        try:
            await asyncio.shield(opening)  # a stop while the device opens closes it once open
            started()
            async with asyncio.timeout(sound.seconds + END_GRACE):
                await finished
        except TimeoutError:
            log.warning("the sound output (%s) did not finish a %.1f s sound in time; closing it",
                        self.device, sound.seconds)
        finally:
            await asyncio.shield(self._close_after(opening))

    async def _close_after(self, opening: asyncio.Future[None]) -> None:
        try:
            async with asyncio.timeout(CLOSE_WITHIN):
                await asyncio.wait([opening])
                if not opening.cancelled():
                    opening.exception()  # seen: a failure to open is raised by `play` already
                await asyncio.to_thread(self._close)
        except TimeoutError:
            log.warning("the sound output (%s) did not open or stop within %g s", self.device, CLOSE_WITHIN)

    # ----- on a worker thread
    def _open(self, sound: Sound, done: Callable[[], None]) -> None:
        self._pcm, self._position = memoryview(sound.pcm), 0
        self._silence = b"\x80" if sound.width == 1 else b"\0"
        self._stream = portaudio.open_stream(lambda sd: self._open_default(sd, sound, done), "Reading aloud")
        log.info("playing %.1f s of speech on %s", sound.seconds, self.device)

    def _open_default(self, sd: ModuleType, sound: Sound, done: Callable[[], None]) -> Any:
        try:
            info = sd.query_devices(kind="output")
        except (sd.PortAudioError, ValueError) as exc:
            log.info("no default output device: %s", exc)
            raise VoiceError("No sound output found: PortAudio sees no speakers or headphones on this computer. "
                             "Plug some in, or check the sound settings.") from exc
        self.device = str(info.get("name") or "the default output")
        self._ended = sd.CallbackStop
        try:
            stream = sd.RawOutputStream(samplerate=sound.rate, channels=sound.channels,
                                        dtype=SAMPLE_TYPES[sound.width], callback=self._fill, finished_callback=done)
            stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise VoiceError(f"The sound output ({self.device}) could not be opened{portaudio.reason(exc)}. Are "
                             "speakers or headphones connected, and is the sound server running?") from exc
        return stream

    def _fill(self, out: Any, _frames: int, _time: Any, _status: Any) -> None:
        """PortAudio's thread: the next samples; silence after the last, and the stream ends."""
        room = len(out)
        chunk = self._pcm[self._position:self._position + room]
        self._position += len(chunk)
        out[:len(chunk)] = chunk
        if len(chunk) < room:
            out[len(chunk):] = self._silence * (room - len(chunk))
            raise self._ended

    def _close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.abort()  # at once: what the device still holds is dropped
            stream.close()
        except Exception:  # the device went away meanwhile
            log.warning("closing the sound output failed", exc_info=True)
        portaudio.closed()

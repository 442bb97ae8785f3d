"""PortAudio (the `sounddevice` package), shared by recording (recorder.py) and reading aloud (player.py).

sounddevice is imported on first use, in a worker thread: importing it loads PortAudio, which asks every sound
device on the machine what it can do (a fraction of a second, more on a busy ALSA system), and nothing of it
belongs on the app's start path or the GUI thread. PortAudio learns the devices once, when it loads; when a
default device is missing or does not open (a headset plugged in since, a sound server restarted), it is asked
again once before the person hears that there is none, but only while no other stream is open: PortAudio
cannot be asked again under a running recording or a voice being played."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TypeVar

from desktop.voice.problems import VoiceError

log = logging.getLogger(__name__)
S = TypeVar("S")
INSTALL_HINT = "Debian and Ubuntu: sudo apt install libportaudio2"
_lock = threading.Lock()
_open_streams = 0


def open_stream(open_default: Callable[[ModuleType], S], purpose: str) -> S:
    """`open_default(sounddevice)`, which opens a stream on a default device or raises VoiceError saying why
    not, tried again once on PortAudio's fresh list of devices. Blocking: call it on a worker thread, and
    `closed()` once the stream is closed. `purpose` ("Recording") begins the sentence when PortAudio is missing."""
    global _open_streams
    sd = _sounddevice(purpose)
    with _lock:
        try:
            stream = open_default(sd)
        except VoiceError:
            if _open_streams:
                raise
            log.info("no usable default device; asking PortAudio for the devices again")
            sd._terminate()  # private, but what sounddevice's author points to (its issue #125) for this
            sd._initialize()
            stream = open_default(sd)
        _open_streams += 1
    return stream


def closed() -> None:
    """A stream `open_stream` gave is closed."""
    global _open_streams
    with _lock:
        _open_streams -= 1


def _sounddevice(purpose: str) -> ModuleType:
    try:
        import sounddevice
    except ImportError as exc:
        raise VoiceError(f"{purpose} needs the Python package sounddevice, which is not installed ({exc}).") from exc
    except OSError as exc:  # sounddevice found no PortAudio library
        raise VoiceError(f"{purpose} needs PortAudio, which is not installed here ({INSTALL_HINT}).") from exc
    return sounddevice


def reason(exc: BaseException) -> str:
    """PortAudio's words for a failure, as ": words" to end a sentence with ("" when it gave none)."""
    text = str(exc).strip()
    return f": {text}" if text else ""

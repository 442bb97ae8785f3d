"""One message box's dictation, from the person's press to the text: a small state machine the window shows.

idle → opening (the microphone) → recording → transcribing → idle, with the text handed to `heard`, or a
VoiceError kept in `problem` for the window to say. Nothing opens the microphone but `start`, which only a
person's click or key press calls; a recording stops by itself at `voice.max_seconds`.

A recording in which the microphone picked up nothing at all (digital silence: a muted input, a sink's monitor
with nothing playing) is not sent: speech models tend to make up words for silence."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

from desktop.kernel.taskset import TaskSet
from desktop.voice.problems import VoiceError
from desktop.voice.recorder import Recorder
from desktop.voice.transcribe import NO_MODEL

if TYPE_CHECKING:
    from desktop.voice import Voice

log = logging.getLogger(__name__)
SHORTEST = 0.2  # seconds: a press and a quick second press record nothing worth sending


class Phase(Enum):
    IDLE = "idle"
    OPENING = "opening"
    RECORDING = "recording"
    TRANSCRIBING = "transcribing"


class Dictation:
    """`changed()` is called at every change of phase or problem; `heard(text)` with each transcript."""

    def __init__(self, voice: Voice, changed: Callable[[], None], heard: Callable[[str], None]) -> None:
        self._voice = voice
        self._changed = changed
        self._heard = heard
        self.phase = Phase.IDLE
        self.problem: VoiceError | None = None
        self._recorder: Recorder | None = None
        self._started = 0.0
        self._stop_asked = False  # stop pressed while the microphone was still opening
        self._tasks = TaskSet("dictation")
        self._limit: asyncio.Future[None] | None = None  # stops the recording at voice.max_seconds

    @property
    def level(self) -> float:
        """How loud the last moment was, 0 to 1 (0 when not recording)."""
        return self._recorder.level if self._recorder is not None else 0.0

    @property
    def seconds(self) -> float:
        """How long it has been recording, by the clock (a sound server may deliver in bursts)."""
        return time.monotonic() - self._started if self._recorder is not None else 0.0

    @property
    def device(self) -> str:
        return self._recorder.device if self._recorder is not None else ""

    def toggle(self) -> None:
        """The button: start when idle, stop while recording (or opening)."""
        if self.phase is Phase.IDLE:
            self._tasks.spawn(self.start())
        elif self.phase in (Phase.OPENING, Phase.RECORDING):
            self._tasks.spawn(self.stop())

    async def start(self) -> None:
        if self.phase is not Phase.IDLE:
            return
        self.problem = None
        voice = self._voice.settings
        if not voice.stt_model:  # said before anyone speaks, not after
            self._fail(VoiceError(NO_MODEL, fix_in_settings=True))
            return
        self._stop_asked = False
        self._set(Phase.OPENING)
        recorder = Recorder(voice.max_seconds)
        try:
            await recorder.start()
        except VoiceError as exc:
            self.phase = Phase.IDLE
            self._fail(exc)
            return
        self._recorder = recorder
        self._started = time.monotonic()
        self._voice.active = self
        self._set(Phase.RECORDING)
        self._limit = self._tasks.spawn(self._stop_at_limit(recorder, voice.max_seconds))
        if self._stop_asked:
            await self.stop()

    async def stop(self) -> None:
        """Stop recording and transcribe what was heard."""
        if self.phase is Phase.OPENING:
            self._stop_asked = True
            return
        recorder = self._recorder
        if self.phase is not Phase.RECORDING or recorder is None:
            return
        log.info("recording stopped after %.1f s", self.seconds)
        self._set(Phase.TRANSCRIBING)
        recording = await recorder.stop()
        self._release()
        try:
            if recording.seconds < SHORTEST:
                raise VoiceError(f"The recording stopped before there was anything to hear (under {SHORTEST:g} s).")
            if recorder.loudest <= 0:
                raise VoiceError(f"The microphone ({recorder.device}) picked up only silence in "
                                 f"{recording.seconds:.1f} s: is it muted, or is another input the default?")
            text = await self._voice.transcribe(recording)
        except VoiceError as exc:
            self.phase = Phase.IDLE
            self._fail(exc)
            return
        self._set(Phase.IDLE)
        if text:
            self._heard(text)
        else:
            self._fail(VoiceError(f"No words were recognised in {recording.seconds:.1f} s of sound."))

    async def cancel(self) -> None:
        """Stop without sending anything anywhere: what was recorded is dropped."""
        recorder = self._recorder
        if self.phase is not Phase.RECORDING or recorder is None:
            return
        await recorder.discard()
        self._release()
        self._set(Phase.IDLE)

    def dismiss(self) -> None:
        """The person has read the problem."""
        if self.problem is not None:
            self.problem = None
            self._changed()

    async def _stop_at_limit(self, recorder: Recorder, seconds: float) -> None:
        await asyncio.sleep(seconds)
        if self._recorder is recorder and self.phase is Phase.RECORDING:
            await self.stop()

    def _release(self) -> None:
        self._recorder = None
        if self._limit is not None and self._limit is not asyncio.current_task():
            self._limit.cancel()
        self._limit = None
        if self._voice.active is self:
            self._voice.active = None

    def _set(self, phase: Phase) -> None:
        self.phase = phase
        self._changed()

    def _fail(self, problem: VoiceError) -> None:
        self.problem = problem
        self._changed()

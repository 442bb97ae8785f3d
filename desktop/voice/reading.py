"""Reading an answer aloud, from the person's click to the last word: one at a time in the whole app (there is
one pair of speakers), so reading another answer stops the one being read.

idle → preparing (the read-aloud model is asked for the first piece) → speaking → idle; or straight to speaking
with speech-dispatcher when no read-aloud model is set. A VoiceError is kept in `problem` for the window to say.
The answer's Markdown is read as words (desktop/voice/spoken.py); with a model, in pieces the model takes, the
next one asked for while the one before is heard."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Hashable
from enum import Enum
from typing import TYPE_CHECKING, Any

from desktop.kernel.taskset import TaskSet
from desktop.voice import dispatcher
from desktop.voice.player import Player, Sound
from desktop.voice.problems import VoiceError
from desktop.voice.settings import VoiceConfig
from desktop.voice.spoken import pieces, speakable
from desktop.workspace.programs import InWorkspace

if TYPE_CHECKING:
    from desktop.voice import Voice

log = logging.getLogger(__name__)

NO_WAY = ("Reading aloud needs a read-aloud model (set one under Settings → Voice, e.g. openai/tts-1) or the "
          f"computer's own voice, speech-dispatcher ({dispatcher.INSTALL}).")
PIECE = 4000  # characters sent at a time: OpenAI's voices take at most 4096
STOP_WITHIN = 10.0  # seconds for a reading to wind down once stopped (the sound itself stops at once)


class Phase(Enum):
    IDLE = "idle"
    PREPARING = "preparing"
    SPEAKING = "speaking"


class ReadAloud:
    """`key` is the answer being read (whatever the window names it by); `watch(changed)` has `changed()`
    called at every change of phase, answer or problem."""

    def __init__(self, voice: Voice) -> None:
        self._voice = voice
        self.phase = Phase.IDLE
        self.key: Hashable | None = None
        self.text = ""  # the words of the answer being read
        self.problem: VoiceError | None = None
        self.dispatcher: str | None = None  # where spd-say is, as last looked for (`look_for_dispatcher`)
        self.refused = ""  # why the spd-say found was not used (it is in the workspace), as last looked for
        self._watchers: list[Callable[[], None]] = []
        self._reading: asyncio.Future[None] | None = None
        self._tasks = TaskSet("read aloud")

    def watch(self, changed: Callable[[], None]) -> Callable[[], None]:
        """Call `changed()` at every change; what is returned stops that."""
        self._watchers.append(changed)
        return lambda: self._watchers.remove(changed) if changed in self._watchers else None

    def reading(self, key: Hashable) -> bool:
        """Whether answer `key` is being read (or prepared)."""
        return self.phase is not Phase.IDLE and self.key == key

    def toggle(self, key: Hashable, markdown: str) -> None:
        """The speaker button: read answer `key`, or stop it when it is the one being read."""
        self._tasks.spawn(self.stop() if self.reading(key) else self.read(key, markdown))

    async def look_for_dispatcher(self) -> str | None:
        """Whether speech-dispatcher is installed (off the GUI thread); kept in `dispatcher`."""
        try:
            found, self.refused = await asyncio.to_thread(dispatcher.find, self._voice.workspace), ""
        except InWorkspace as exc:
            found, self.refused = None, f"Reading aloud did not start speech-dispatcher: {exc}."
        if found != self.dispatcher:
            self.dispatcher = found
            self._changed()
        return found

    async def read(self, key: Hashable, markdown: str) -> None:
        """Stop whatever is read now, then read `markdown` aloud."""
        await self.stop()
        self.problem = None
        voice = self._voice.settings
        text = speakable(markdown)
        if not text:
            self._fail(VoiceError("This answer has no words to read aloud."))
            return
        self.key, self.text = key, text
        self._set(Phase.PREPARING)
        if voice.tts_model:
            self._reading = self._tasks.spawn(self._run(lambda: self._by_model(text, voice)))
            return
        program = await self.look_for_dispatcher()
        if not self.reading(key) or self._reading is not None:
            return  # stopped, or another answer clicked, meanwhile
        if program is None:
            self._fail(VoiceError(self.refused or NO_WAY, fix_in_settings=not self.refused))
            return
        self._set(Phase.SPEAKING)
        self._reading = self._tasks.spawn(self._run(lambda: dispatcher.say(program, text)))

    async def stop(self) -> None:
        """Silence at once; nothing more of that answer is asked for."""
        reading, self._reading = self._reading, None
        if reading is not None:
            reading.cancel()
            done, _ = await asyncio.wait([reading], timeout=STOP_WITHIN)
            if not done:
                log.warning("reading aloud did not wind down within %g s", STOP_WITHIN)
        if self.phase is not Phase.IDLE:
            self.key = None
            self._set(Phase.IDLE)

    def dismiss(self) -> None:
        """The person has read the problem."""
        if self.problem is not None:
            self.problem = None
            self._changed()

    async def _run(self, reading: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """A reading to its end, or to the problem that ended it."""
        try:
            await reading()
        except VoiceError as exc:
            self._end(exc)
        except Exception as exc:  # a fault of ours: said, not left speaking forever
            log.exception("reading aloud failed")
            self._end(VoiceError(f"Reading aloud failed: {type(exc).__name__}: {exc}"))
        else:
            self._end(None)

    async def _by_model(self, text: str, voice: VoiceConfig) -> None:
        parts = pieces(text, PIECE)
        log.info("reading %d characters aloud with %s, in %d piece(s)", len(text), voice.tts_model, len(parts))
        coming: asyncio.Future[Sound] = asyncio.ensure_future(self._voice.speech(parts[0], voice))
        try:
            for index in range(len(parts)):
                sound = await coming
                if index + 1 < len(parts):  # asked for while this one is heard
                    coming = asyncio.ensure_future(self._voice.speech(parts[index + 1], voice))
                await Player().play(sound, lambda: self._set(Phase.SPEAKING))
        finally:
            coming.cancel()
            if coming.done() and not coming.cancelled():
                coming.exception()  # the next piece's failure, unheard once stopped

    def _end(self, problem: VoiceError | None) -> None:
        if self._reading is not asyncio.current_task():
            return  # stopped meanwhile: `stop` says so
        self._reading = None
        self.key = None
        self.problem = problem
        self._set(Phase.IDLE)

    def _set(self, phase: Phase) -> None:
        self.phase = phase
        self._changed()

    def _fail(self, problem: VoiceError) -> None:
        self.key = None
        self.problem = problem
        self._set(Phase.IDLE)

    def _changed(self) -> None:
        for changed in list(self._watchers):
            changed()

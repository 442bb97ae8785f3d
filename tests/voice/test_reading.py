"""Reading an answer aloud without a window: the read-aloud model at the scripted server is sent the answer's
words and its WAV is played into a private PulseAudio server's speakers, where it is heard; or, with no model,
speech-dispatcher says it there. Stop silences it at once; each way it can fail is said in words."""

from __future__ import annotations

import asyncio
import os
import struct
import time
from pathlib import Path

from desktop.core import Core
from desktop.kernel import secrets
from desktop.kernel.work import Source
from desktop.providers.tokens import count_text
from desktop.usage import Usage
from desktop.voice import Voice
from desktop.voice.reading import NO_WAY, Phase, ReadAloud
from desktop.voice.settings import VoiceConfig
from tests.fakeserver import FakeOpenAI, tone_wav
from tests.memkeyring import MemoryKeyring
from tests.pulse import PulseServer
from tests.speechd import SpeechDispatcher

ANSWER = ("Paris is the capital of **France**.\n\n```python\nprint('bonjour')\n```\n\n"
          "More at https://en.wikipedia.org/wiki/Paris.")
WORDS = "Paris is the capital of France.\nCode block omitted.\nMore at a link to en.wikipedia.org."
PYTHON = "ALSA plug-in [python3"  # how PortAudio's stream names itself to PulseAudio


def _reader(core: Core, fake: FakeOpenAI | None, **settings: object) -> ReadAloud:
    section = core.config.section(VoiceConfig)
    section.tts_model = "openai/tts-1" if fake is not None else ""
    section.api_base = fake.base_url if fake is not None else ""
    for key, value in settings.items():
        setattr(section, key, value)
    return core.get(Voice).reader


async def _until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def _heard(speakers: PulseServer, seconds: float = 0.4) -> float:
    return await asyncio.to_thread(speakers.loudest, seconds)


async def _hear(speakers: PulseServer, loudness: float, timeout: float = 15.0) -> None:
    """Until the speakers play something at least that loud (a sound server takes a second or two to pass
    sound on to a null sink's monitor)."""
    async with asyncio.timeout(timeout):
        while await _heard(speakers, 0.3) < loudness:
            pass


async def _playing(speakers: PulseServer) -> list[str]:
    return await asyncio.to_thread(speakers.playing)


async def test_the_answer_s_words_go_to_the_model_and_its_voice_is_heard(
        core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake, tts_voice="nova")
    fake.add_voices({"seconds": 2.0})
    phases: list[Phase] = []
    reader.watch(lambda: phases.append(reader.phase))
    await reader.read("answer-1", ANSWER)
    await _until(lambda: reader.phase is Phase.SPEAKING, timeout=20)
    assert reader.reading("answer-1") and reader.text == WORDS
    [asked] = fake.speeches
    assert (asked["model"], asked["voice"], asked["response_format"]) == ("tts-1", "nova", "wav")
    assert asked["input"] == WORDS
    assert any(name.startswith(PYTHON) for name in await _playing(speakers))
    await _hear(speakers, 0.45)  # the server's tone, at half of full scale

    await _until(lambda: reader.phase is Phase.IDLE, timeout=10)
    assert phases == [Phase.PREPARING, Phase.SPEAKING, Phase.IDLE] and reader.problem is None
    assert not any(name.startswith(PYTHON) for name in await _playing(speakers))
    assert await _heard(speakers) == 0.0


async def test_stop_silences_it_at_once_and_nothing_more_is_asked_for(
        core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    fake.add_voices({"seconds": 30.0})
    await reader.read("answer-1", "A long answer.\n" + "Another paragraph of it. " * 300)
    await _until(lambda: reader.phase is Phase.SPEAKING, timeout=20)
    await _hear(speakers, 0.45)
    started = time.monotonic()
    await reader.stop()
    assert time.monotonic() - started < 1.0
    assert reader.phase is Phase.IDLE and not reader.reading("answer-1") and reader.problem is None
    assert not any(name.startswith(PYTHON) for name in await _playing(speakers))
    assert await _heard(speakers) == 0.0
    await asyncio.sleep(0.5)
    assert len(fake.speeches) <= 2  # the first piece, and perhaps the next asked for meanwhile: no more


async def test_a_long_answer_is_read_in_pieces_the_model_takes_in_order(
        core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    fake.add_voices({"seconds": 0.3}, {"seconds": 0.3}, {"seconds": 0.3})
    paragraph = "Every sentence here is part of a long answer. " * 40  # 1840 characters
    answer = "\n\n".join([paragraph.strip()] * 5)
    await reader.read("long", answer)
    await _until(lambda: reader.phase is Phase.IDLE and len(fake.speeches) == 3, timeout=30)
    sent = [asked["input"] for asked in fake.speeches]
    assert all(len(piece) <= 4000 for piece in sent)
    assert " ".join(" ".join(sent).split()) == " ".join(answer.split())
    assert reader.problem is None


async def test_openai_s_streamed_wav_whose_header_has_no_end_plays(
        core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    sound = bytearray(tone_wav(3.0))
    sound[4:8] = sound[40:44] = struct.pack("<I", 0xFFFFFFFF)  # RIFF and data sizes, as OpenAI streams them
    fake.add_voices({"body_bytes": bytes(sound)})
    await reader.read("answer-1", "Hello.")
    await _until(lambda: reader.phase is not Phase.PREPARING, timeout=20)
    assert reader.phase is Phase.SPEAKING, reader.problem
    await _hear(speakers, 0.45)
    await reader.stop()


async def test_reading_another_answer_stops_the_first(core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    fake.add_voices({"seconds": 30.0}, {"seconds": 30.0})
    await reader.read("first", "The first answer.")
    await _until(lambda: reader.phase is Phase.SPEAKING, timeout=20)
    await reader.read("second", "The second answer.")
    assert reader.reading("second") and not reader.reading("first")
    await _until(lambda: reader.phase is Phase.SPEAKING, timeout=20)
    assert [asked["input"] for asked in fake.speeches] == ["The first answer.", "The second answer."]
    assert len([name for name in await _playing(speakers) if name.startswith(PYTHON)]) == 1
    await reader.stop()


async def test_the_servers_refusal_is_said_with_its_reason(core: Core, fake: FakeOpenAI,
                                                           speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    fake.add_voices({"status": 400, "body": {"error": {"message": "Voice 'robot' is not one of alloy, nova"}}})
    await reader.read("answer-1", "Hello.")
    await _until(lambda: reader.phase is Phase.IDLE and reader.problem is not None, timeout=20)
    assert str(reader.problem) == (f"The speech server at http://127.0.0.1:{fake.port} refused the text (HTTP 400): "
                                   "Voice 'robot' is not one of alloy, nova.")
    assert not any(name.startswith(PYTHON) for name in await _playing(speakers))


async def test_a_local_server_that_wants_a_key_gets_the_one_in_the_keyring(
        core: Core, fake: FakeOpenAI, speakers: PulseServer, memory_keyring: MemoryKeyring) -> None:
    reader = _reader(core, fake)
    memory_keyring.set_password(secrets.SERVICE, "openai", "sk-local-voice-5678")
    fake.require_key = "sk-local-voice-5678"
    fake.add_voices({"seconds": 0.3})
    await reader.read("answer-1", "Hello.")
    await _until(lambda: reader.phase is Phase.IDLE and len(fake.speeches) == 2, timeout=20)
    assert [asked["authorization"] for asked in fake.speeches] == ["Bearer no-key-needed",
                                                                   "Bearer sk-local-voice-5678"]
    assert reader.problem is None


async def test_no_sound_output_is_said_in_words(core: Core, fake: FakeOpenAI, no_speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    await reader.read("answer-1", "Hello.")
    await _until(lambda: reader.phase is Phase.IDLE and reader.problem is not None, timeout=20)
    assert str(reader.problem).startswith("The sound output (default) could not be opened")
    assert "Are speakers or headphones connected" in str(reader.problem)
    assert not reader.problem.fix_in_settings  # type: ignore[union-attr]


async def test_without_a_model_speech_dispatcher_says_it_and_stop_cancels_it(
        core: Core, speech_dispatcher: SpeechDispatcher) -> None:
    reader = _reader(core, None)
    speakers = speech_dispatcher.pulse
    answer = "-v " + "The computer's own voice reads this answer out, sentence by sentence. " * 8
    await reader.read("answer-1", answer)
    assert reader.phase is Phase.SPEAKING and reader.dispatcher is not None
    await _until(_spd_say_command)
    # the words go on its input: no process's command line (readable by every user in /proc) holds them
    assert _spd_say_command() == ["spd-say", "--wait", "--pipe-mode"]
    await _hear(speakers, 0.1)  # espeak-ng's voice
    started = time.monotonic()
    await reader.stop()
    assert time.monotonic() - started < 3.0 and reader.phase is Phase.IDLE
    assert await asyncio.to_thread(_spd_say_command) is None
    assert await _heard(speakers, 0.5) == 0.0


async def test_with_neither_a_model_nor_speech_dispatcher_it_says_what_is_needed(
        core: Core, no_speech_dispatcher: None) -> None:
    reader = _reader(core, None)
    await reader.read("answer-1", "Hello.")
    assert reader.phase is Phase.IDLE and str(reader.problem) == NO_WAY and reader.dispatcher is None
    assert reader.problem is not None and reader.problem.fix_in_settings
    assert "Settings → Voice" in NO_WAY and "sudo apt install speech-dispatcher" in NO_WAY


def _spd_say_command() -> list[str] | None:
    """The command line of the spd-say this process runs, if any."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        except OSError:
            continue
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        if parent == os.getpid() and argv and argv[0].endswith(b"spd-say"):
            return [Path(argv[0].decode()).name, *(part.decode() for part in argv[1:])]
    return None


async def test_reading_aloud_is_counted_in_usage_estimated_from_the_words_sent(
        core: Core, fake: FakeOpenAI, speakers: PulseServer) -> None:
    reader = _reader(core, fake)
    fake.add_voices({"seconds": 0.3})
    await reader.read("answer-1", ANSWER)
    await _until(lambda: reader.phase is Phase.IDLE and len(fake.speeches) == 1, timeout=20)
    usage = core.get(Usage)
    await usage.log.flush()
    [record] = await asyncio.to_thread(usage.log.read_since, 0)
    assert (record.source, record.model, record.estimated) == (Source.CHAT, "openai/tts-1", True)
    assert (record.prompt_tokens, record.completion_tokens) == (count_text(WORDS, "openai/tts-1"), 0)
    assert record.cost_usd is None  # a server on this computer: no price

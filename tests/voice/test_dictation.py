"""Dictation without a window: a real recording from the default input (a private PulseAudio server's tone),
sent to the scripted speech server, the text handed back; and each way it can fail, in words."""

from __future__ import annotations

import asyncio
import io
import wave
from array import array

from desktop.core import Core
from desktop.kernel import secrets
from desktop.kernel.bus import TurnFinished
from desktop.kernel.work import Source
from desktop.providers.tokens import count_text
from desktop.usage import Usage
from desktop.usage.records import CallRecord
from desktop.voice import Voice
from desktop.voice.dictation import Dictation, Phase
from desktop.voice.settings import VoiceConfig
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.memkeyring import MemoryKeyring
from tests.pulse import PulseServer


def _voice(core: Core, fake: FakeOpenAI | None, **settings: object) -> Voice:
    section = core.config.section(VoiceConfig)
    section.stt_model = "openai/whisper-1"
    section.api_base = fake.base_url if fake is not None else ""
    for key, value in settings.items():
        setattr(section, key, value)
    return core.get(Voice)


class Listener:
    def __init__(self, voice: Voice) -> None:
        self.heard: list[str] = []
        self.phases: list[Phase] = []
        self.dictation: Dictation = voice.dictation(lambda: self.phases.append(self.dictation.phase),
                                                    self.heard.append)


async def _until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def test_what_the_microphone_hears_goes_to_the_speech_model_and_its_text_comes_back(
        core: Core, fake: FakeOpenAI, microphone: PulseServer) -> None:
    voice = _voice(core, fake, language="en")
    fake.add_transcripts({"text": "  Book a table for two at eight.  "})
    listener = Listener(voice)
    dictation = listener.dictation
    await dictation.start()
    assert dictation.phase is Phase.RECORDING and voice.active is dictation
    await _until(lambda: dictation.level > 0.5)  # the tone fills most of the meter
    await asyncio.sleep(0.5)
    await dictation.stop()

    assert listener.heard == ["Book a table for two at eight."]
    assert listener.phases == [Phase.OPENING, Phase.RECORDING, Phase.TRANSCRIBING, Phase.IDLE]
    assert dictation.problem is None and voice.active is None and dictation.level == 0
    [upload] = fake.uploads
    assert upload["model"] == "whisper-1" and upload["language"] == "en" and upload["response_format"] == "json"
    assert upload["file"]["filename"] == "dictation.wav" and upload["file"]["type"] == "audio/wav"
    with wave.open(io.BytesIO(upload["file"]["data"])) as sound:
        assert (sound.getnchannels(), sound.getsampwidth(), sound.getframerate()) == (1, 2, 16000)
        assert sound.getnframes() >= 16000 * 0.5
        samples = array("h", sound.readframes(sound.getnframes()))
    assert max(samples) > 8000  # the tone itself, not silence


async def test_a_local_server_that_wants_a_key_gets_the_one_in_the_keyring(
        core: Core, fake: FakeOpenAI, microphone: PulseServer, memory_keyring: MemoryKeyring) -> None:
    voice = _voice(core, fake)
    memory_keyring.set_password(secrets.SERVICE, "openai", "sk-local-speech-1234")  # stored before this run
    fake.require_key = "sk-local-speech-1234"
    listener = Listener(voice)
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    assert [u["authorization"] for u in fake.uploads] == ["Bearer no-key-needed", "Bearer sk-local-speech-1234"]
    assert listener.heard and listener.heard[0].startswith("heard ")
    assert "sk-local" not in str(listener.dictation.problem)


async def test_without_a_speech_model_it_says_so_before_opening_the_microphone(
        core: Core, fake: FakeOpenAI, microphone: PulseServer) -> None:
    voice = _voice(core, fake, stt_model="")
    listener = Listener(voice)
    await listener.dictation.start()
    problem = listener.dictation.problem
    assert problem is not None and problem.fix_in_settings
    assert str(problem).startswith("No speech model is set") and "Settings → Voice" in str(problem)
    assert listener.phases == [Phase.IDLE] and listener.dictation.device == "" and not fake.uploads


async def test_no_microphone_is_said_in_words(core: Core, fake: FakeOpenAI, no_microphone: None) -> None:
    listener = Listener(_voice(core, fake))
    await listener.dictation.start()
    problem = listener.dictation.problem
    assert problem is not None and str(problem).startswith("No microphone found") and not problem.fix_in_settings
    assert listener.phases == [Phase.OPENING, Phase.IDLE] and not fake.uploads


async def test_a_muted_microphone_is_not_sent_to_be_made_into_words(
        core: Core, fake: FakeOpenAI, muted_microphone: PulseServer) -> None:
    listener = Listener(_voice(core, fake))
    await listener.dictation.start()
    await asyncio.sleep(0.5)
    await listener.dictation.stop()
    problem = listener.dictation.problem
    assert problem is not None and "picked up only silence" in str(problem) and "is it muted" in str(problem)
    assert not fake.uploads and not listener.heard


async def test_the_servers_refusal_is_said_with_its_reason(core: Core, fake: FakeOpenAI,
                                                           microphone: PulseServer) -> None:
    fake.add_transcripts({"status": 400, "body": {"error": {
        "message": "Unsupported language: klingon", "type": "invalid_request_error"}}})
    listener = Listener(_voice(core, fake, language="klingon"))
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    assert str(listener.dictation.problem) == (f"The speech server at http://127.0.0.1:{fake.port} refused the "
                                               "recording (HTTP 400): Unsupported language: klingon.")
    assert not listener.heard and listener.dictation.phase is Phase.IDLE


async def test_stray_escapes_in_a_transcript_or_a_refusal_are_mended_and_the_message_saves(
        core: Core, fake: FakeOpenAI, microphone: PulseServer) -> None:
    """A speech server's JSON may escape lone surrogates; the model helper could not hand such text to the app,
    so dictation waited out its time and said there was no answer."""
    stray = "bad \udcff, half \ud83d, reversed \ude00\ud83d, whole \ud83d\ude00"
    mended = "bad \ufffd, half \ufffd, reversed \ufffd\ufffd, whole \U0001f600"
    fake.add_transcripts({"text": stray}, {"status": 400, "body": {"error": {"message": f"Refused: {stray}"}}})
    listener = Listener(_voice(core, fake))
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    assert listener.dictation.problem is None and listener.heard == [mended]

    chat = Conversation(core)
    fake.add({"content": "Noted."})
    end = await chat.ask(listener.heard[0])
    assert isinstance(end, TurnFinished) and end.content == "Noted."
    assert last_user_text(fake.requests[-1]) == mended
    assert [m["content"] for m in session_lines(core, chat.key) if m.get("role") == "user"] == [mended]

    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    assert str(listener.dictation.problem).endswith(f"refused the recording (HTTP 400): Refused: {mended}.")


async def test_an_unreachable_server_and_a_refused_key_point_to_settings(
        core: Core, fake: FakeOpenAI, microphone: PulseServer, closed_port: int) -> None:
    listener = Listener(_voice(core, fake))
    core.config.section(VoiceConfig).api_base = f"http://127.0.0.1:{closed_port}/v1"
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    problem = listener.dictation.problem
    assert problem is not None and problem.fix_in_settings
    assert str(problem).startswith(f"Can't reach the speech server at http://127.0.0.1:{closed_port} — is it running?")

    core.config.section(VoiceConfig).api_base = fake.base_url
    fake.add_transcripts({"status": 401, "body": {"error": {"message": "Invalid API Key"}}})
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.stop()
    problem = listener.dictation.problem
    assert problem is not None and problem.fix_in_settings
    assert str(problem).startswith(f"The speech server at http://127.0.0.1:{fake.port} refused the API key "
                                   "(HTTP 401): Invalid API Key. Check the openai key")


async def test_a_recording_stops_by_itself_at_the_limit_and_is_transcribed(
        core: Core, fake: FakeOpenAI, microphone: PulseServer) -> None:
    listener = Listener(_voice(core, fake, max_seconds=1))
    await listener.dictation.start()
    await _until(lambda: listener.heard, timeout=15)
    assert listener.dictation.phase is Phase.IDLE
    assert 1.0 <= float(listener.heard[0].split()[1]) <= 2.5  # "heard 1.0 s of audio": no more than the limit's worth


async def test_cancel_drops_the_recording_and_sends_nothing(core: Core, fake: FakeOpenAI,
                                                            microphone: PulseServer) -> None:
    listener = Listener(_voice(core, fake))
    await listener.dictation.start()
    await asyncio.sleep(0.3)
    await listener.dictation.cancel()
    assert listener.dictation.phase is Phase.IDLE and core.get(Voice).active is None
    await asyncio.sleep(0.3)
    assert not fake.uploads and not listener.heard and listener.dictation.problem is None


async def recorded(core: Core) -> list[CallRecord]:
    usage = core.get(Usage)
    await usage.log.flush()
    return await asyncio.to_thread(usage.log.read_since, 0)


async def dictate(voice: Voice) -> list[str]:
    listener = Listener(voice)
    await listener.dictation.start()
    await _until(lambda: listener.dictation.level > 0.5)
    await asyncio.sleep(0.5)  # past the shortest recording sent: the tone's first block alone can come in under it
    await listener.dictation.stop()
    assert listener.dictation.problem is None, listener.dictation.problem
    return listener.heard


async def test_a_dictation_is_counted_in_usage_as_typed_work_with_what_the_server_reported(
        core: Core, fake: FakeOpenAI, microphone: PulseServer) -> None:
    voice = _voice(core, fake)
    fake.add_transcripts(
        {"text": "Hello there.", "usage": {"type": "tokens", "input_tokens": 120, "output_tokens": 4,
                                           "total_tokens": 124}},
        {"text": "Whisper bills by the second.", "usage": {"type": "duration", "seconds": 3.2}},
        {"text": "A server that says nothing."})
    for _ in range(3):
        await dictate(voice)
    reported, seconds, nothing = await recorded(core)
    assert {r.source for r in (reported, seconds, nothing)} == {Source.CHAT}
    assert {r.model for r in (reported, seconds, nothing)} == {"openai/whisper-1"}
    assert (reported.prompt_tokens, reported.completion_tokens, reported.estimated) == (120, 4, False)
    for estimated, text in ((seconds, "Whisper bills by the second."), (nothing, "A server that says nothing.")):
        assert estimated.estimated and estimated.prompt_tokens == 0
        assert estimated.completion_tokens == count_text(text, "openai/whisper-1")
    assert reported.cost_usd is None  # a server on this computer: no price

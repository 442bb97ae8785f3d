"""A recording to text, with litellm's `transcription` and the configured speech model (`voice.stt_model`,
at `voice.api_base` when set), with the key and the failures in words as desktop/voice/server.py has them."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from desktop.providers.llm import AudioCall, LLMProvider
from desktop.providers.model_thread import run_on_model_thread
from desktop.voice import server
from desktop.voice.problems import VoiceError
from desktop.voice.recorder import Recording
from desktop.voice.settings import VoiceConfig

NO_MODEL = ("No speech model is set, so what you say cannot become text. Choose one under Settings → Voice "
            "(e.g. openai/whisper-1, or a whisper server of your own).")
FILE_NAME = "dictation.wav"
GRACE = 5.0  # seconds past the request's own timeout before the whole call is given up


async def transcribe(recording: Recording, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> str:
    """The text of `recording` ("" when the model heard no words). Raises VoiceError."""
    if not voice.stt_model:
        raise VoiceError(NO_MODEL, fix_in_settings=True)
    try:
        async with asyncio.timeout(timeout + GRACE):
            response = await run_on_model_thread(_ask(recording, voice, provider, timeout))
    except TimeoutError as exc:
        raise VoiceError(f"No answer from {server.where(voice.stt_model, voice.api_base)} within {timeout:g} s.",
                         fix_in_settings=bool(voice.api_base)) from exc
    text: str = response["text"]
    await server.count(provider, voice.stt_model, heard(response["usage"], text, recording, voice))
    return text


def heard(usage: dict[str, Any], text: str, recording: Recording, voice: VoiceConfig) -> AudioCall:
    """The call as the server reported it: tokens (gpt-4o-transcribe), or only the sound's length (whisper), or
    nothing (then the length recorded here)."""
    return AudioCall(False, text, voice.api_base or None, usage["input_tokens"], usage["output_tokens"],
                     usage["seconds"] if usage["seconds"] is not None else recording.seconds)


async def _ask(recording: Recording, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> dict[str, Any]:
    request: dict[str, Any] = {
        "model": voice.stt_model,
        "response_format": "json",  # what every OpenAI-style server answers (gpt-4o-transcribe has no verbose_json)
        "timeout": timeout, "max_retries": 0,
    }
    if voice.api_base:
        request["api_base"] = voice.api_base
    if voice.language:
        request["language"] = voice.language
    wav = base64.b64encode(recording.wav()).decode()
    return await server.call("transcription", request, provider, "The recording could not be transcribed",
                             wav=wav, file_name=FILE_NAME)

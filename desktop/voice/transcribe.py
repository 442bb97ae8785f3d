"""A recording to text, with litellm's `transcription` and the configured speech model (`voice.stt_model`,
at `voice.api_base` when set), with the key and the failures in words as desktop/voice/server.py has them."""

from __future__ import annotations

import asyncio
from typing import Any

from desktop.providers.litellm_env import litellm
from desktop.providers.llm import LLMProvider
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
            return await run_on_model_thread(_ask(recording, voice, provider, timeout))
    except TimeoutError as exc:
        raise VoiceError(f"No answer from {server.where(voice.stt_model, voice.api_base)} within {timeout:g} s.",
                         fix_in_settings=bool(voice.api_base)) from exc


async def _ask(recording: Recording, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> str:
    kwargs: dict[str, Any] = {
        "model": voice.stt_model, "file": (FILE_NAME, recording.wav(), "audio/wav"),
        "response_format": "json",  # what every OpenAI-style server answers (gpt-4o-transcribe has no verbose_json)
        "timeout": timeout, "max_retries": 0,
    }
    if voice.api_base:
        kwargs["api_base"] = voice.api_base
    if voice.language:
        kwargs["language"] = voice.language
    try:
        response = await server.ask(litellm().atranscription, kwargs, provider)
    except Exception as exc:
        raise server.failure(exc, voice.stt_model, voice.api_base, timeout, "the recording",
                             "The recording could not be transcribed") from exc
    return str(getattr(response, "text", "") or "").strip()

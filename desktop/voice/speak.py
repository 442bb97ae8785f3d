"""Text to speech with litellm's `speech` and the configured read-aloud model (`voice.tts_model`, in the voice
`voice.tts_voice`, at `voice.api_base` when set), asked for WAV; with the key and the failures in words as
desktop/voice/server.py has them."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from desktop.providers.llm import AudioCall, LLMProvider
from desktop.providers.model_thread import run_on_model_thread
from desktop.voice import server
from desktop.voice.player import Sound
from desktop.voice.problems import VoiceError
from desktop.voice.settings import VoiceConfig

GRACE = 5.0  # seconds past the request's own timeout before the whole call is given up


async def synthesize(text: str, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> Sound:
    """`text` spoken by the read-aloud model. Raises VoiceError."""
    place = server.where(voice.tts_model, voice.api_base)
    try:
        async with asyncio.timeout(timeout + GRACE):
            data = await run_on_model_thread(_ask(text, voice, provider, timeout))
    except TimeoutError as exc:
        raise VoiceError(f"No answer from {place} within {timeout:g} s.", fix_in_settings=bool(voice.api_base)) from exc
    # A speech server answers with sound only, no usage: the meter estimates from the text and prices it by the
    # characters when the price map bills that way.
    await server.count(provider, voice.tts_model, AudioCall(True, text, voice.api_base or None))
    try:
        return Sound.from_wav(data)
    except ValueError as exc:
        raise VoiceError(f"{place[0].upper()}{place[1:]} answered with sound that cannot be played: {exc}.") from exc


async def _ask(text: str, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> bytes:
    request: dict[str, Any] = {"model": voice.tts_model, "input": text, "response_format": "wav",
                               "timeout": timeout, "max_retries": 0}
    if voice.tts_voice:
        request["voice"] = voice.tts_voice
    if voice.api_base:
        request["api_base"] = voice.api_base
    result = await server.call("speech", request, provider, "The answer could not be turned into speech")
    return base64.b64decode(result["sound"])

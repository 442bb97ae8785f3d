"""A recording to text, with litellm's `transcription` and the configured speech model (`voice.stt_model`,
at `voice.api_base` when set). The API key comes from where the chat model's does (LLMProvider.key_for): the
provider's environment variable, else the OS keyring; a local server gets none until it asks for one.

A failure becomes a VoiceError in plain words that carry the server's own reason: a speech server's refusals
("audio too short", "unsupported language") are the person's only clue."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from desktop.providers.failures import server_root
from desktop.providers.litellm_env import litellm
from desktop.providers.llm import NO_KEY, LLMProvider, ProviderError, provider_name
from desktop.providers.model_thread import run_on_model_thread
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
        raise VoiceError(f"No answer from {_where(voice)} within {timeout:g} s.",
                         fix_in_settings=bool(voice.api_base)) from exc


async def _ask(recording: Recording, voice: VoiceConfig, provider: LLMProvider, timeout: float) -> str:
    lm = litellm()
    model, base = voice.stt_model, voice.api_base
    kwargs: dict[str, Any] = {
        "model": model, "file": (FILE_NAME, recording.wav(), "audio/wav"),
        "response_format": "json",  # what every OpenAI-style server answers (gpt-4o-transcribe has no verbose_json)
        "timeout": timeout, "max_retries": 0,
    }
    if base:
        kwargs["api_base"] = base
    if voice.language:
        kwargs["language"] = voice.language
    try:
        key = provider.key_for(model, base)
    except ProviderError as exc:
        raise VoiceError(str(exc), fix_in_settings=True) from exc
    if key:
        kwargs["api_key"] = key
    try:
        try:
            response = await lm.atranscription(**kwargs)
        except lm.AuthenticationError:
            if key != NO_KEY or not base:
                raise
            provider.refused_without_key(base)  # a local server that wants a key: the stored one, if any
            kwargs["api_key"] = provider.key_for(model, base)
            if kwargs["api_key"] == NO_KEY:
                raise
            response = await lm.atranscription(**kwargs)
    except ProviderError as exc:  # the keyring, asked for the retry
        raise VoiceError(str(exc), fix_in_settings=True) from exc
    except Exception as exc:
        raise failure(exc, voice, timeout) from exc
    return str(getattr(response, "text", "") or "").strip()


def failure(exc: Exception, voice: VoiceConfig, timeout: float) -> VoiceError:
    """What the person reads when the speech server did not give text back."""
    lm = litellm()
    where = _where(voice)
    Where = where[0].upper() + where[1:]
    status = getattr(exc, "status_code", None)
    reason = server_reason(exc)
    if isinstance(exc, (lm.Timeout, TimeoutError)):
        return VoiceError(f"No answer from {where} within {timeout:g} s.", fix_in_settings=bool(voice.api_base))
    if isinstance(exc, (lm.APIConnectionError, ConnectionError)):
        if voice.api_base:
            return VoiceError(f"Can't reach the speech server at {server_root(voice.api_base)} — is it running? "
                              f"({reason})", fix_in_settings=True)
        return VoiceError(f"Can't reach {where}. Check the internet connection. ({reason})")
    if status in (401, 403):
        provider = provider_name(voice.stt_model)
        return VoiceError(f"{Where} refused the API key (HTTP {status}): {reason}. Check the {provider} key "
                          f"(nanobot-tray keys set {provider}).", fix_in_settings=True)
    if status == 404:
        return VoiceError(f"{Where} does not know the speech model '{voice.stt_model}' (HTTP 404): {reason}.",
                          fix_in_settings=True)
    if isinstance(status, int):
        return VoiceError(f"{Where} refused the recording (HTTP {status}): {reason}.")
    return VoiceError(f"The recording could not be transcribed: {type(exc).__name__}: {reason}.")


def server_reason(exc: BaseException) -> str:
    """The server's own words: the error body's message, else litellm's text without its prefixes."""
    body = getattr(exc, "body", None)
    message = body.get("message") if isinstance(body, dict) else body if isinstance(body, str) else None
    if not message:
        message = str(getattr(exc, "message", "") or exc)
        message = re.sub(r"^(litellm\.\w+:\s*)?(\w+Error:\s*)?(\w*Exception\s*-\s*)?", "", message)
    message = re.sub(r"\s+", " ", str(message)).strip().rstrip(".")
    message = re.sub(r"(sk|key|gsk)[-_][A-Za-z0-9_\-]{8,}", "[redacted]", message)
    return message[:300] or "no reason given"


def _where(voice: VoiceConfig) -> str:
    if voice.api_base:
        return f"the speech server at {server_root(voice.api_base)}"
    return f"{provider_name(voice.stt_model)}'s speech service"

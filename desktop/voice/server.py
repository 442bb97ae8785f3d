"""What dictation and reading aloud share in talking to a speech service through litellm: the API key (from
where the chat model's comes, LLMProvider.key_for: the provider's environment variable, else the OS keyring; a
local server at `voice.api_base` gets none until it refuses a request without one), and a failure in plain words
that carry the server's own reason: a speech server's refusals ("audio too short", "input too long") are the
person's only clue."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from desktop.providers.failures import server_root
from desktop.providers.litellm_env import litellm
from desktop.providers.llm import NO_KEY, AudioCall, LLMProvider, ProviderError, provider_name
from desktop.voice.problems import VoiceError

T = TypeVar("T")


async def ask(call: Callable[..., Awaitable[T]], kwargs: dict[str, Any], provider: LLMProvider) -> T:
    """`call(**kwargs)` (a litellm call, `model` and maybe `api_base` in `kwargs`) with the right key; on the
    model thread (the keyring may be asked). Raises ProviderError when the keyring fails."""
    model, base = kwargs["model"], kwargs.get("api_base", "")
    key = provider.key_for(model, base)
    if key:
        kwargs["api_key"] = key
    try:
        return await call(**kwargs)
    except litellm().AuthenticationError:
        if key != NO_KEY or not base:
            raise
        provider.refused_without_key(base)  # a local server that wants a key: the stored one, if any
        kwargs["api_key"] = provider.key_for(model, base)
        if kwargs["api_key"] == NO_KEY:
            raise
        return await call(**kwargs)


async def count(provider: LLMProvider, model: str, call: AudioCall) -> None:
    """Count a speech model's call where every model call is counted (the provider's meter, desktop/usage), under
    the work that asked for it: dictation and reading aloud are the person's own, `chat`."""
    if provider.meter is not None:
        await provider.meter.count_audio(model, call)


def failure(exc: BaseException, model: str, base: str, timeout: float, sent: str, undone: str) -> VoiceError:
    """What the person reads when the speech service did not do its part: `sent` names what it was sent ("the
    recording"), `undone` what did not happen ("The recording could not be transcribed")."""
    lm = litellm()
    place = where(model, base)
    Place = place[0].upper() + place[1:]
    status = getattr(exc, "status_code", None)
    reason = server_reason(exc)
    if isinstance(exc, ProviderError):  # the keyring, asked for the key
        return VoiceError(str(exc), fix_in_settings=True)
    if isinstance(exc, (lm.Timeout, TimeoutError)):
        return VoiceError(f"No answer from {place} within {timeout:g} s.", fix_in_settings=bool(base))
    if isinstance(exc, (lm.APIConnectionError, ConnectionError)):
        if base:
            return VoiceError(f"Can't reach the speech server at {server_root(base)} — is it running? "
                              f"({reason})", fix_in_settings=True)
        return VoiceError(f"Can't reach {place}. Check the internet connection. ({reason})")
    if status in (401, 403):
        name = provider_name(model)
        return VoiceError(f"{Place} refused the API key (HTTP {status}): {reason}. Check the {name} key "
                          f"(nanobot-tray keys set {name}).", fix_in_settings=True)
    if status == 404:
        return VoiceError(f"{Place} does not know the speech model '{model}' (HTTP 404): {reason}.",
                          fix_in_settings=True)
    if isinstance(status, int):
        return VoiceError(f"{Place} refused {sent} (HTTP {status}): {reason}.")
    return VoiceError(f"{undone}: {type(exc).__name__}: {reason}.")


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


def where(model: str, base: str) -> str:
    if base:
        return f"the speech server at {server_root(base)}"
    return f"{provider_name(model)}'s speech service"

"""What dictation and reading aloud share in the app: the call in the model helper (desktop/voice/calls.py, where
failures are put in words) with its key found as the chat model's is (LLMProvider.call_keyed: the provider's
environment variable, else the OS keyring; a local server at `voice.api_base` gets none until it refuses a
request without one), and its count on the meter."""

from __future__ import annotations

from typing import Any

from desktop.providers.failures import server_root
from desktop.providers.helper import HelperFailed, HelperGone
from desktop.providers.llm import AudioCall, LLMProvider, ProviderError
from desktop.voice.problems import VoiceError


async def call(op: str, request: dict[str, Any], provider: LLMProvider, undone: str, **extra: Any) -> dict[str, Any]:
    """The helper's `op` (`speech`, `transcription`) with the right key; on the model thread (the keyring may be
    asked). Returns its result; raises VoiceError, whose words `undone` starts when the helper itself failed."""
    try:
        result = await provider.call_keyed(op, request, **extra)
    except ProviderError as exc:  # the keyring, asked for the key
        raise VoiceError(str(exc), fix_in_settings=True) from exc
    except (HelperGone, HelperFailed) as exc:
        raise VoiceError(f"{undone}: {exc}") from exc
    failure = result.get("failure")
    if failure:
        raise VoiceError(failure["message"], fix_in_settings=failure["fix_in_settings"])
    return result


async def count(provider: LLMProvider, model: str, call: AudioCall) -> None:
    """Count a speech model's call where every model call is counted (the provider's meter, desktop/usage), under
    the work that asked for it: dictation and reading aloud are the person's own, `chat`."""
    if provider.meter is not None:
        await provider.meter.count_audio(model, call)


def where(model: str, base: str) -> str:
    """The service, for a call that got no answer at all (its own failures name it in the helper)."""
    if base:
        return f"the speech server at {server_root(base)}"
    return f"the speech service for {model}"

"""What one call cost and, when the server did not say, how many tokens it used: from litellm's price map and
tiktoken, offline, in the model helper (`price_call`, `price_audio`: desktop/providers/helper_main.py names them),
where both live; the meter asks right after the call, while the helper is up."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any
from urllib.parse import urlsplit

from desktop.providers.helper import EventSink
from desktop.providers.litellm_env import litellm
from desktop.providers.tokens import count_text, estimate_messages

log = logging.getLogger(__name__)


def is_local(api_base: str | None) -> bool:
    """A server on this computer or the local network: what it answers costs no money, whatever the model's
    name says (a local server may serve a model under the name of a priced one)."""
    if not api_base:
        return False
    host = (urlsplit(api_base if "//" in api_base else f"//{api_base}").hostname or "").lower()
    if host == "localhost" or host.endswith((".local", ".localhost")) or (host and "." not in host
                                                                           and ":" not in host):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, cached_tokens: int,
             api_base: str | None) -> float | None:
    """The call's price in US dollars by litellm's price map (cached prompt tokens at their own price); None
    for a local server or a model the map does not price."""
    if is_local(api_base):
        return None
    try:
        prompt, completion = litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                      completion_tokens=completion_tokens,
                                                      cache_read_input_tokens=cached_tokens)
    except Exception as exc:  # litellm raises for a model it does not know, in more ways than one
        log.debug("no price for %s: %s", model, exc)
        return None
    return float(prompt) + float(completion)


def estimate(model: str, messages: list[dict[str, Any]], answer: str) -> tuple[int, int]:
    """Prompt and completion tokens of a call the server did not count (tiktoken, the model's encoding when
    known)."""
    return estimate_messages(messages, model), count_text(answer, model)


def audio_cost(model: str, speech: bool, seconds: float | None, characters: int,
               api_base: str | None) -> float | None:
    """The price of a speech model's call by what litellm's map bills it by: seconds of sound heard (whisper),
    characters read aloud (tts-1); None for a local server, a model the map lacks, or one it prices by tokens
    only (then `cost_usd` over the tokens is what is known)."""
    if is_local(api_base):
        return None
    try:
        if speech:
            prompt, completion = litellm().cost_per_token(model=model, call_type="aspeech",
                                                          prompt_characters=characters)
        elif seconds:
            prompt, completion = litellm().cost_per_token(model=model, call_type="atranscription",
                                                          audio_transcription_file_duration=seconds)
        else:
            return None
    except Exception as exc:
        log.debug("no price for %s: %s", model, exc)
        return None
    return float(prompt) + float(completion) or None


async def price_call(_emit: EventSink, *, model: str, usage: dict[str, int], messages: list[dict[str, Any]] | None,
                     answer: str, api_base: str | None) -> dict[str, Any]:
    """A chat call's tokens and price: as its server reported them (`usage`), else estimated from the
    `messages` sent and the `answer` (then `estimated`)."""
    if usage:
        prompt, completion = usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)
        cached = usage.get("cached_tokens", 0)
    else:
        (prompt, completion), cached = estimate(model, messages or [], answer), 0
    return {"prompt": prompt, "completion": completion, "cached": cached, "estimated": not usage,
            "cost": cost_usd(model, prompt, completion, cached, api_base)}


async def price_audio(_emit: EventSink, *, model: str, speech: bool, text: str, api_base: str | None,
                      prompt_tokens: int | None, completion_tokens: int | None,
                      seconds: float | None) -> dict[str, Any]:
    """A speech model's call: the tokens its server reported, priced per token; else tiktoken's count of the
    text (the sound's own tokens cannot be told from here: `estimated`), priced by the sound's seconds or the
    characters read when the map bills the model so, else by those tokens."""
    reported = prompt_tokens is not None
    cost = None
    if reported:
        prompt, completion = prompt_tokens or 0, completion_tokens or 0
    else:
        text_tokens = count_text(text, model)
        prompt, completion = (text_tokens, 0) if speech else (0, text_tokens)
        cost = audio_cost(model, speech, seconds, len(text), api_base)
    if cost is None:
        cost = cost_usd(model, prompt, completion, 0, api_base)
    return {"prompt": prompt, "completion": completion, "estimated": not reported, "cost": cost}


"""Checking a model connection from a settings form.

One request with no retries, and a failure turned into what the user should check."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any
from urllib.parse import urlsplit

from desktop.config import Config, ProviderConfig
from desktop.providers.litellm_env import litellm
from desktop.providers.llm import LLMProvider, ProviderError

TEST_TIMEOUT = 30.0


class _TrialProvider(LLMProvider):
    """The provider as configured in the form, with a key typed there taking precedence over the keyring."""

    def __init__(self, config: Config, key: str | None) -> None:
        super().__init__(config)
        self._typed_key = key

    def api_key(self, model: str) -> str | None:
        return self._typed_key or super().api_key(model)


async def test_connection(config: Config, typed_key: str | None = None, timeout: float = TEST_TIMEOUT) -> str:
    """One request for one token with these settings, no retries. Returns a line for the user;
    raises ProviderError whose message says what went wrong in plain words."""
    if not config.model:
        raise ProviderError("Choose a model first.")
    lm = await asyncio.to_thread(litellm)
    trial = dataclasses.replace(config, provider=ProviderConfig(timeout=timeout, retry_delays=[]))
    started = time.monotonic()
    try:
        await _TrialProvider(trial, typed_key or None).chat(
            [{"role": "user", "content": "Reply with the single word: ok"}], max_tokens=1, allow_empty=True)
    except ProviderError as exc:
        reachable = await _answers(config.api_base) if config.api_base else True
        raise ProviderError(explain(exc, config, lm, reachable)) from exc
    return f"Connected: {config.model} answered in {time.monotonic() - started:.1f} s."


def explain(exc: ProviderError, config: Config, lm: Any, reachable: bool = True) -> str:
    """Turn a provider failure into what the user should check."""
    cause = exc.__cause__
    detail = str(exc)
    if not reachable:
        return f"Nothing answers at {config.api_base}. Is the server running, and is the address right?"
    if cause is None and detail.startswith("No API key"):
        return f"{detail} Or paste the key in the API key field and save."
    if isinstance(cause, lm.AuthenticationError):
        return f"The provider refused the API key. Check the key and save it again. ({detail})"
    if isinstance(cause, lm.NotFoundError):
        return f"The provider does not know the model '{config.model}'. ({detail})"
    if isinstance(cause, lm.Timeout):
        return f"No answer within {TEST_TIMEOUT:.0f} s. ({detail})"
    return detail


async def _answers(url: str, timeout: float = 3.0) -> bool:
    """Whether anything accepts a TCP connection at the URL's host and port."""
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        _, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname or "", port), timeout)
    except (TimeoutError, OSError, ValueError):
        return False
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass
    return True

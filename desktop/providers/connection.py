"""Checking a model connection from a settings form.

One request with no retries; a failure says what to check (desktop/providers/failures.py, as in the chat)."""

from __future__ import annotations

import dataclasses
import time

from desktop.config import Config
from desktop.providers.llm import LLMProvider, ProviderError
from desktop.providers.settings import ProviderConfig

TEST_TIMEOUT = 30.0


class _TrialProvider(LLMProvider):
    """The provider as configured in the form, with a key typed there taking precedence over the keyring."""

    def __init__(self, config: Config, key: str | None) -> None:
        super().__init__(config)
        self._typed_key = key

    async def key_for(self, model: str, base: str | None) -> str | None:
        return self._typed_key or await super().key_for(model, base)


async def test_connection(config: Config, typed_key: str | None = None, timeout: float = TEST_TIMEOUT) -> str:
    """One request for one token with these settings, no retries. Returns a line for the user;
    raises ProviderError whose message says what went wrong in plain words."""
    if not config.model:
        raise ProviderError("Choose a model first.")
    trial = dataclasses.replace(config, provider=ProviderConfig(timeout=timeout, retry_delays=[]))
    started = time.monotonic()
    await _TrialProvider(trial, typed_key or None).chat(
        [{"role": "user", "content": "Reply with the single word: ok"}], max_tokens=1, allow_empty=True)
    return f"Connected: {config.model} answered in {time.monotonic() - started:.1f} s."

"""Settings changed in the app: saved to config.yaml, applied to the running core, checked against the model.

Qt-free so the same steps serve the Settings window, the onboarding panel and tests."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from desktop import secrets
from desktop.config import Config, LoadedConfig, ProviderConfig, load_config, save_config
from desktop.core import Core, workspace_of
from desktop.workspace import ensure_workspace
from desktop.providers.litellm_env import litellm
from desktop.providers.llm import LLMProvider, ProviderError, provider_name

TEST_TIMEOUT = 30.0


async def read_current(core: Core) -> LoadedConfig:
    """config.yaml as it is on disk now (it may have been edited since start), with its problems."""
    return await asyncio.to_thread(load_config, core.loaded.path)


async def save_and_apply(core: Core, new: Config, *, keep_broken_copy: bool = False) -> Path | None:
    """Write config.yaml atomically and switch the running core to it. With `keep_broken_copy`, the file
    being replaced had problems: it is first copied aside so nothing the user wrote is lost; returns the copy."""
    path = core.loaded.path
    workspace = workspace_of(core.home, new)

    def write() -> Path | None:
        copy = None
        if keep_broken_copy and path.exists():
            copy = path.with_name(f"{path.name}.broken-{time.strftime('%Y%m%d-%H%M%S')}")
            shutil.copy2(path, copy)
        ensure_workspace(workspace)
        save_config(path, new)
        return copy

    copy = await asyncio.to_thread(write)
    core.apply_config(new)
    core.loaded.problems.clear()
    return copy


async def key_provider(model: str) -> str:
    """The keyring name for a model's key (may import litellm, so never on the GUI thread)."""
    return await asyncio.to_thread(provider_name, model)


async def store_key(provider: str, key: str) -> None:
    # A closure, not to_thread(fn, key): executors log their call arguments and results at debug level.
    await asyncio.to_thread(lambda: secrets.set_key(provider, key))


async def has_key(provider: str) -> bool:
    """Whether a key is stored (the value itself never leaves the worker thread)."""
    return await asyncio.to_thread(lambda: bool(secrets.get_key(provider)))


async def forget_key(provider: str) -> bool:
    return await asyncio.to_thread(secrets.delete_key, provider)


@dataclass(frozen=True)
class KeyringState:
    backend: str
    plaintext: bool
    problem: str | None  # why the keyring cannot be used, and how to fix that

    @property
    def summary(self) -> str:
        short = self.backend.rsplit(".", 2)
        name = ".".join(short[-2:])
        if self.problem:
            return f"The OS keyring is not usable ({name})."
        if self.plaintext:
            return f"Keys are stored by {name}, which keeps them in a plain file on disk."
        return f"Keys are stored in the OS keyring ({name})."


async def keyring_state() -> KeyringState:
    def probe() -> KeyringState:
        try:
            secrets.list_providers()
            problem = None
        except secrets.KeyringUnavailable as exc:
            problem = str(exc)
        return KeyringState(secrets.backend_name(), secrets.is_plaintext_backend(), problem)

    return await asyncio.to_thread(probe)


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
            [{"role": "user", "content": "Reply with the single word: ok"}], max_tokens=1)
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
    except (OSError, ValueError, asyncio.TimeoutError):
        return False
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass
    return True

"""API keys in the OS keyring only: never in files, logs or sessions."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import keyring
import keyring.errors

SERVICE = "nanobot-tray"
_INDEX = "__providers__"  # names (never values) of stored keys, since keyring cannot list


class KeyringUnavailable(RuntimeError):
    """The OS keyring cannot be used; the message says how to fix it."""


def _fix_hint(exc: Exception) -> str:
    return (f"The OS keyring is not usable ({type(exc).__name__}: {exc}). Install and unlock a Secret "
            "Service provider (GNOME Keyring or KWallet) in your desktop session, or set the key in "
            "the provider's environment variable (e.g. OPENAI_API_KEY) instead.")


def backend_name() -> str:
    kr = keyring.get_keyring()
    return f"{type(kr).__module__}.{type(kr).__name__}"


def is_plaintext_backend() -> bool:
    return "plaintext" in backend_name().lower() or "keyrings.alt" in backend_name()


def _call(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return fn(*args)
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailable(_fix_hint(exc)) from exc
    except Exception as exc:  # D-Bus and backend libraries raise their own types
        raise KeyringUnavailable(_fix_hint(exc)) from exc


_cache: dict[tuple[int, str], tuple[str | None, float]] = {}
_seen: set[str] = set()
CACHE_SECONDS = 300.0  # keyring lookups can be slow D-Bus calls (or a desktop prompt): not once per model call


def get_key(provider: str) -> str | None:
    """The stored key, cached briefly; changes made through this module are seen at once."""
    cached = _cache.get(_slot(provider))
    if cached is not None and time.monotonic() - cached[1] < CACHE_SECONDS:
        return cached[0]
    value = _call(keyring.get_password, SERVICE, provider)
    _remember(provider, value)
    return value


def values_seen() -> set[str]:
    """Keys this process has handled, so logging can scrub them."""
    return set(_seen)


def _slot(provider: str) -> tuple[int, str]:
    return id(keyring.get_keyring()), provider


def _remember(provider: str, value: str | None) -> None:
    _cache[_slot(provider)] = (value, time.monotonic())
    if value:
        _seen.add(value)


def list_providers() -> list[str]:
    index = _call(keyring.get_password, SERVICE, _INDEX) or ""
    return sorted({name for name in index.split(",") if name})


def set_key(provider: str, secret: str) -> None:
    if not provider or provider == _INDEX or "," in provider:
        raise ValueError(f"not a provider name: {provider!r}")
    if not secret:
        raise ValueError("the key is empty")
    _call(keyring.set_password, SERVICE, provider, secret)
    _remember(provider, secret)
    names = set(list_providers()) | {provider}
    _call(keyring.set_password, SERVICE, _INDEX, ",".join(sorted(names)))


def delete_key(provider: str) -> bool:
    """Delete a stored key; False when there was none."""
    try:
        _call(keyring.delete_password, SERVICE, provider)
        existed = True
    except KeyringUnavailable as exc:
        if not isinstance(exc.__cause__, keyring.errors.PasswordDeleteError):
            raise
        existed = False
    _remember(provider, None)
    names = set(list_providers()) - {provider}
    _call(keyring.set_password, SERVICE, _INDEX, ",".join(sorted(names)))
    return existed


# Async faces for the GUI thread: the keyring may be a slow D-Bus call or show a desktop prompt.

async def store_key(provider: str, key: str) -> None:
    # A closure, not to_thread(fn, key): executors log their call arguments and results at debug level.
    await asyncio.to_thread(lambda: set_key(provider, key))


async def has_key(provider: str) -> bool:
    """Whether a key is stored (the value itself never leaves the worker thread)."""
    return await asyncio.to_thread(lambda: bool(get_key(provider)))


async def forget_key(provider: str) -> bool:
    return await asyncio.to_thread(delete_key, provider)


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
            list_providers()
            problem = None
        except KeyringUnavailable as exc:
            problem = str(exc)
        return KeyringState(backend_name(), is_plaintext_backend(), problem)

    return await asyncio.to_thread(probe)

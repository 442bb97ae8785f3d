"""API keys in the OS keyring only: never in files, logs or sessions."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from types import ModuleType

from desktop.kernel import logs

log = logging.getLogger(__name__)

SERVICE = "nanobot-tray"
_INDEX = "__providers__"  # names (never values) of stored keys, since keyring cannot list


class KeyringUnavailable(RuntimeError):
    """The OS keyring cannot be used; the message says why and how to fix it. `reason` is the why alone, in
    plain words ("the keyring's password prompt was dismissed"), and `advice` the how, for a form that offers
    its own way on."""

    def __init__(self, message: str, reason: str = "", advice: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message
        self.advice = advice


ENV_ADVICE = "or set the key in the provider's environment variable (e.g. OPENAI_API_KEY) instead."
INSTALL_ADVICE = ("Install and unlock a Secret Service provider (GNOME Keyring or KWallet) in your desktop "
                  f"session, {ENV_ADVICE}")


def _keyring() -> ModuleType:
    """The keyring library, imported when a key is first needed: with the backends it finds it is 5 MB and 30 ms
    of the app's start, and an app at rest, or one that talks only to a local server, never needs it."""
    import keyring
    import keyring.backends.fail
    import keyring.errors

    return keyring


def _plain(exc: Exception) -> tuple[str, str]:
    """Why the keyring failed, in words a person reads without knowing its library (no exception names, no
    "Prompt dismissed.." as a backend words it), and what to do about it."""
    said = " ".join(str(exc).split()).rstrip(". ")
    lowered = said.lower()
    if "dismissed" in lowered:  # the desktop's "Unlock your keyring" or "Choose a password" dialog cancelled
        return "the keyring's password prompt was dismissed", f"Unlock it when it asks, {ENV_ADVICE}"
    if isinstance(exc, _keyring().errors.KeyringLocked) or "locked" in lowered:
        return "the keyring is locked", f"Unlock it (GNOME Keyring or KWallet), {ENV_ADVICE}"
    if isinstance(exc, _keyring().errors.NoKeyringError) or not said:
        return "no keyring is installed", INSTALL_ADVICE
    return f"the keyring answered “{said}”", INSTALL_ADVICE


def _unusable(exc: Exception) -> KeyringUnavailable:
    reason, advice = _plain(exc)
    return KeyringUnavailable(f"The OS keyring is not usable: {reason}. {advice}", reason, advice)


def backend_name() -> str:
    kr = _keyring().get_keyring()
    return f"{type(kr).__module__}.{type(kr).__name__}"


def is_plaintext_backend() -> bool:
    return "plaintext" in backend_name().lower() or "keyrings.alt" in backend_name()


def _call(fn, *args):  # type: ignore[no-untyped-def]
    try:
        result = fn(*args)
    except _keyring().errors.PasswordDeleteError as exc:
        raise KeyringUnavailable(str(exc)) from exc  # the keyring works; delete_key tells the two apart
    except Exception as exc:  # KeyringError, D-Bus and backend libraries' own types
        unusable = _unusable(exc)
        if _run().problem is None:
            log.warning("keyring unavailable for this run: %s (%s: %s)", unusable, type(exc).__name__, exc)
        _run().problem = unusable
        raise unusable from exc
    _run().problem = None
    return result


class _RunState:
    """What this run has learnt from one keyring backend. On desktops whose login does not unlock a keyring,
    every backend call may pop up a system password dialog, so each fact is asked for at most once."""

    def __init__(self) -> None:
        self.keys: dict[str, str | None] = {}  # provider -> key, None when none is stored
        self.problem: KeyringUnavailable | None = None  # why the keyring failed; not asked again this run


_runs: dict[int, tuple[object, _RunState]] = {}  # by backend (kept, so its id is not reused)


def _run() -> _RunState:
    backend = _keyring().get_keyring()
    return _runs.setdefault(id(backend), (backend, _RunState()))[1]


def get_key(provider: str) -> str | None:
    """The stored key: the backend is asked once per run; changes made through this module are seen at once.
    Raises KeyringUnavailable at once, without asking again, when the keyring already failed this run."""
    run = _run()
    if provider in run.keys:
        return run.keys[provider]
    if run.problem is not None:
        known = run.problem
        raise KeyringUnavailable(str(known), known.reason, known.advice)
    value = _call(_keyring().get_password, SERVICE, provider)
    _remember(provider, value)
    return value


def known_key(provider: str) -> bool | None:
    """Whether a key is stored, if this run already knows; None when finding out would need the keyring."""
    run = _run()
    return bool(run.keys[provider]) if provider in run.keys else None


def _remember(provider: str, value: str | None) -> None:
    _run().keys[provider] = value
    if value:
        logs.hide(value)


def list_providers() -> list[str]:
    index = _call(_keyring().get_password, SERVICE, _INDEX) or ""
    return sorted({name for name in index.split(",") if name})


def set_key(provider: str, secret: str) -> None:
    if not provider or provider == _INDEX or "," in provider:
        raise ValueError(f"not a provider name: {provider!r}")
    if not secret:
        raise ValueError("the key is empty")
    _call(_keyring().set_password, SERVICE, provider, secret)
    _remember(provider, secret)
    names = set(list_providers()) | {provider}
    _call(_keyring().set_password, SERVICE, _INDEX, ",".join(sorted(names)))


def delete_key(provider: str) -> bool:
    """Delete a stored key; False when there was none."""
    try:
        _call(_keyring().delete_password, SERVICE, provider)
        existed = True
    except KeyringUnavailable as exc:
        if not isinstance(exc.__cause__, _keyring().errors.PasswordDeleteError):
            raise
        existed = False
    _remember(provider, None)
    names = set(list_providers()) - {provider}
    _call(_keyring().set_password, SERVICE, _INDEX, ",".join(sorted(names)))
    return existed


# Async faces for the GUI thread: the keyring may be a slow D-Bus call or show a desktop prompt.

async def store_key(provider: str, key: str) -> None:
    # A closure, not to_thread(fn, key): executors log their call arguments and results at debug level.
    await asyncio.to_thread(lambda: set_key(provider, key))


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
    """What is known about the keyring without asking it anything (asking may pop up a system dialog): the
    backend's name, and a problem only when there is no backend or a call already failed this run."""
    def known() -> KeyringState:
        backend = _keyring().get_keyring()  # choosing the backend asks nothing of it
        problem = _run().problem
        if problem is None and isinstance(backend, _keyring().backends.fail.Keyring):
            problem = _unusable(_keyring().errors.NoKeyringError())
        return KeyringState(backend_name(), is_plaintext_backend(), str(problem) if problem else None)

    return await asyncio.to_thread(known)

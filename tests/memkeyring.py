"""An in-memory keyring backend for unit tests (the real keyring is exercised in e2e tests).

It counts every call that would reach a real backend (on a desktop without an unlocked keyring, each
may pop up a system password dialog) and can be locked, failing the way an unusable keyring does, or fail with any
error a real backend raises (`failure`), or hold its set call until the test lets it through (`gate`), as a
keyring's password prompt holds it until the person answers."""

from __future__ import annotations

import threading

from keyring.backend import KeyringBackend
from keyring.errors import KeyringLocked, PasswordDeleteError


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}
        self.calls: list[str] = []  # "get openai", "set openai", ... in order
        self.locked = False
        self.failure: Exception | None = None  # raised by every call instead, e.g. the prompt dismissed
        self.gate: threading.Event | None = None  # set: set_password waits for it (bounded), a prompt open

    def _called(self, what: str) -> None:
        self.calls.append(what)
        if self.failure is not None:
            raise self.failure
        if self.locked:
            raise KeyringLocked("the login keyring is locked")

    def get_password(self, service: str, username: str) -> str | None:
        self._called(f"get {username}")
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._called(f"set {username}")
        if self.gate is not None and not self.gate.wait(timeout=20):
            raise TimeoutError("the test never let the keyring's set call through")
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._called(f"delete {username}")
        if self.store.pop((service, username), None) is None:
            raise PasswordDeleteError(username)

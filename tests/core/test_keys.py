"""API keys go to the keyring and only there."""

from __future__ import annotations

import pytest

from desktop import secrets
from tests.memkeyring import MemoryKeyring


def test_set_list_delete_round_trip(memory_keyring: MemoryKeyring) -> None:
    secrets.set_key("openai", "sk-one")
    secrets.set_key("anthropic", "sk-two")
    assert secrets.list_providers() == ["anthropic", "openai"]
    assert secrets.get_key("openai") == "sk-one"
    assert memory_keyring.store[("nanobot-tray", "openai")] == "sk-one"
    assert secrets.delete_key("openai") is True
    assert secrets.delete_key("openai") is False
    assert secrets.list_providers() == ["anthropic"]
    assert secrets.get_key("openai") is None


def test_bad_input_is_refused(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(ValueError):
        secrets.set_key("openai", "")
    with pytest.raises(ValueError):
        secrets.set_key("__providers__", "x")
    assert secrets.list_providers() == []

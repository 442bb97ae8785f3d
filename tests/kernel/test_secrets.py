"""API keys go to the keyring and only there."""

from __future__ import annotations

import pytest

from desktop.kernel import secrets
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


def test_keys_are_scrubbed_from_logs(memory_keyring: MemoryKeyring, tmp_path, capsys) -> None:
    import logging

    from desktop.kernel.logs import setup_logging

    root = logging.getLogger()
    before = list(root.handlers)
    try:
        setup_logging(verbose=True, log_dir=tmp_path)
        secrets.set_key("openai", "plain-looking-key-123")
        logging.getLogger("anything").debug("calling with %s and sk-abcdefghijkl", "plain-looking-key-123")
        for handler in root.handlers:
            handler.flush()
    finally:
        for handler in set(root.handlers) - set(before):
            root.removeHandler(handler)
    written = (tmp_path / "nanobot-tray.log").read_text() + capsys.readouterr().err
    assert "calling with [redacted] and [redacted]" in written
    assert "plain-looking-key-123" not in written and "sk-abcdefghijkl" not in written

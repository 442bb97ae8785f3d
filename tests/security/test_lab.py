"""The lab's own checks can fail: a key that reaches the app's log file is caught, and the app's logging
scrubs one logged by mistake (so the "no key in logs" check of every case looks at a real log)."""

from __future__ import annotations

import logging

import pytest

from tests.security.harness import ENV_SECRET, KEYRING_SECRET, Lab

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_key_logged_by_the_app_is_scrubbed_from_its_log_file(lab: Lab) -> None:
    before = lab.snapshot()
    logging.getLogger("desktop.agent").debug("calling the model with key %s", ENV_SECRET)
    logging.getLogger("desktop.mcp").warning("server said: Bearer %s", KEYRING_SECRET)
    written = lab.log_file.read_text(encoding="utf-8")
    assert "calling the model with key [redacted]" in written and "server said: [redacted]" in written
    assert lab.breaches(before, []) == []


async def test_a_key_that_reaches_the_log_file_is_a_breach(lab: Lab) -> None:
    before = lab.snapshot()
    with lab.log_file.open("a", encoding="utf-8") as log:
        log.write(f"leaked {ENV_SECRET}\n")
    try:
        assert any("in the log" in found for found in lab.breaches(before, []))
    finally:
        text = lab.log_file.read_text(encoding="utf-8")
        lab.log_file.write_text(text.replace(f"leaked {ENV_SECRET}\n", ""), encoding="utf-8")

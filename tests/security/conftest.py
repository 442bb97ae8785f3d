"""The adversarial suite's lab (one core per module) and its closing count of what held and how."""

from __future__ import annotations

from collections.abc import AsyncIterator

import keyring
import pytest
import pytest_asyncio
import yaml

from desktop.core import build_core
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.memkeyring import MemoryKeyring
from tests.security.harness import (
    ASKED,
    CONTAINED,
    ENV_SECRET,
    GROUPS,
    KEYRING_SECRET,
    REFUSED,
    STOPPED,
    TALLY,
    THROUGH,
    CanaryServer,
    Lab,
    app_logging,
    plant,
)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Lab]:
    """One core per module (a core takes a while to build); cases share it and check everything after each."""
    root = tmp_path_factory.mktemp("security")
    previous_keyring = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    ring.set_password("nanobot-tray", "anthropic", KEYRING_SECRET)
    with pytest.MonkeyPatch.context() as mp, FakeOpenAI() as fake:
        mp.setenv("NANOBOT_TRAY_HOME", str(root / "app"))
        mp.setenv("HOME", str(root / "user"))
        mp.setenv("OPENAI_API_KEY", ENV_SECRET)
        for var in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
            mp.delenv(var, raising=False)
        (root / "app").mkdir()
        (root / "app" / "config.yaml").write_text(yaml.safe_dump({
            "model": "openai/test", "api_base": fake.base_url,
            "provider": {"timeout": 10, "retry_delays": [0.05]}}))
        (root / "app" / "data" / "sessions").mkdir(parents=True)
        (root / "app" / "data" / "sessions" / "cli_other.jsonl").write_text('{"role": "user", "content": "private"}\n')
        with app_logging(root / "app" / "data" / "logs"):
            core = build_core()
            await core.start()
            canary, canary6 = CanaryServer("127.0.0.1"), CanaryServer("::1")
            lab = Lab(root, core, Conversation(core), fake, canary, canary6)
            lab.planted = plant(root, core.workspace)
            try:
                yield lab
            finally:
                await core.close()
                canary.close()
                canary6.close()
    keyring.set_keyring(previous_keyring)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLY["tried"]:
        terminalreporter.write_line(
            f"security: {TALLY['tried']} bad inputs tried — {TALLY[CONTAINED]} contained by the sandbox, "
            f"{TALLY[REFUSED]} refused by policy, {TALLY[ASKED]} asked (answered no), "
            f"{TALLY[STOPPED]} stopped by a limit, {TALLY[THROUGH]} got through")
        for group, tally in sorted(GROUPS.items()):
            terminalreporter.write_line(
                f"  {group}: {tally['tried']} tried, {tally[CONTAINED]} contained, {tally[REFUSED]} refused, "
                f"{tally[ASKED]} asked, {tally[STOPPED]} stopped by a limit, {tally[THROUGH]} got through")

"""`nanobot-tray agent -m` waits for the background tasks its turn started and prints what the agent told
of them; --no-wait leaves at once and cancels them."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_cli import run_cli
from tests.conftest import write_config
from tests.fakeserver import FakeOpenAI
from tests.subagents.test_subagents import model


def test_agent_m_waits_for_its_background_tasks(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    fake.default = model([{"task": "list the workspace", "label": "Listing"}],
                         subagent={"content": "Report: 4 files.", "delay": 0.5})
    result = run_cli(tmp_path, "agent", "-m", "what is in my workspace?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I started that in the background.\nSummary for you: Report: 4 files.\n"
    assert "waiting for background task “Listing”" in result.stderr


def test_no_wait_leaves_at_once_and_cancels(tmp_path: Path, fake: FakeOpenAI) -> None:
    write_config(tmp_path, model="openai/test", api_base=fake.base_url)
    fake.default = model([{"task": "a slow job"}], subagent={"content": "Report: late.", "delay": 5})
    result = run_cli(tmp_path, "agent", "-m", "start it", "--no-wait")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I started that in the background.\n"
    assert "cancelled 1 background task: --no-wait" in result.stderr

"""The skills shipped with the app, the skill-creator validator, the `skills` command line, and skills
in a running core (prompt, `$name`, read_file on a skill's location)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from desktop.kernel.paths import bundled
from desktop.skills.frontmatter import parse_skill
from desktop.skills.loader import SkillsLoader
from desktop.tools.base import ToolContext
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI

BUILTIN = ["cron", "github", "memory", "skill-creator", "summarize", "tmux", "weather"]
VALIDATOR = bundled("skills") / "skill-creator" / "scripts" / "validate_skill.py"


def test_every_builtin_skill_loads_without_diagnostics() -> None:
    statuses = SkillsLoader([("builtin", bundled("skills"))]).scan()
    assert [s.name for s in statuses] == BUILTIN
    for status in statuses:
        doc = status.doc
        assert doc.diagnostics == (), (doc.name, doc.diagnostics)
        assert doc.declared_name == doc.name and doc.emoji and len(doc.body) > 200
    always = [s.name for s in statuses if s.doc.always]
    assert always == ["memory"]
    needs = {s.name: s.doc.bins for s in statuses}
    assert needs["github"] == ("gh",) and needs["weather"] == ("curl",) and needs["tmux"] == ("tmux",)
    assert needs["summarize"] == needs["cron"] == needs["memory"] == ()


CASES = {
    "good": "---\nname: good\ndescription: Fine.\n---\nBody.\n",
    "bad-yaml": "---\nname: bad-yaml\ndescription: Use when: x\n---\nBody\n",
    "no-desc": "---\nname: no-desc\n---\nBody\n",
    "no-front": "Just text\n",
    "Wrong_Name": "---\nname: Wrong_Name\ndescription: x\n---\nBody\n",
    "mismatch": "---\nname: other\ndescription: x\n---\n",
    "meta": "---\nname: meta\ndescription: x\nmetadata: '{bad json'\n---\nBody\n",
    "claw": ("---\nname: claw\ndescription: x\nmetadata:\n  openclaw:\n    always: 'yes'\n    os: [beos]\n"
             "    requires: {bins: gh, env: [1]}\n    install: [3]\n---\nBody\n"),
    "long": "---\ndescription: " + "d" * 1100 + "\n---\nBody\n",
}


def test_validator_script_agrees_with_the_loader(tmp_path: Path) -> None:
    for folder, text in CASES.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "SKILL.md").write_text(text, encoding="utf-8")
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": ""}  # standalone: must not need the app
    result = subprocess.run([sys.executable, "-I", str(VALIDATOR), *(str(tmp_path / f) for f in CASES)],
                            capture_output=True, text=True, timeout=30, env=env, cwd=tmp_path)
    assert result.returncode == 1
    printed = result.stdout.splitlines()
    expected = []
    for folder in CASES:
        doc = parse_skill(tmp_path / folder / "SKILL.md")
        expected += [f"{doc.path}: {d.level}: {d.message}" for d in doc.diagnostics] or [f"{doc.path}: OK"]
    assert printed == expected
    assert any("error" in line for line in printed) and any("warning" in line for line in printed)

    clean = subprocess.run([sys.executable, "-I", str(VALIDATOR), *(str(p) for p in bundled("skills").iterdir())],
                           capture_output=True, text=True, timeout=30)
    assert clean.returncode == 0 and clean.stdout.count(": OK") == len(BUILTIN), clean.stdout


# --- command line --------------------------------------------------------------------------------

def run_cli(home: Path, *args: str, user_home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(NANOBOT_TRAY_HOME=str(home), HOME=str(user_home or home / "user"), PATH="/nonexistent-bin-dir")
    return subprocess.run([sys.executable, "-m", "desktop", "skills", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_cli_list_check_and_install(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, skills={"disabled": ["tmux"]})
    user_skill = home / "user" / ".agents" / "skills" / "from-user"
    user_skill.mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: from-user\ndescription: Cross-client skill.\n---\nBody\n")

    listed = run_cli(home, "list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:] if line.strip()}
    assert rows["github"][:5] == ["github", "builtin", "no", "no", "yes"] and "CLI: gh" in listed.stdout
    assert rows["memory"][:5] == ["memory", "builtin", "yes", "yes", "yes"]
    assert rows["tmux"][4] == "no"
    assert rows["from-user"][:2] == ["from-user", "user"]

    assert run_cli(home, "check").returncode == 0

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nBody\n")
    checked = run_cli(home, "check", str(broken))
    assert checked.returncode == 1 and "error: no description" in checked.stdout

    archive = tmp_path / "weather.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("weather/SKILL.md", "---\nname: weather\ndescription: My own weather.\n---\nMine.\n")
    installed = run_cli(home, "install", str(archive))
    assert installed.returncode == 0, installed.stderr
    assert (home / "workspace" / "skills" / "weather" / "SKILL.md").read_text().endswith("Mine.\n")
    again = run_cli(home, "install", str(archive))
    assert again.returncode == 1 and "--force" in again.stderr
    assert run_cli(home, "install", str(archive), "--force").returncode == 0
    relisted = run_cli(home, "list").stdout
    assert any(line.split()[:2] == ["weather", "workspace"] for line in relisted.splitlines())
    assert "overrides the builtin one" in relisted


def test_cli_enable_and_disable_go_through_the_settings_writer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, model="openai/kept", temperature=0.7, skills={"disabled": ["tmux"]})

    disabled = run_cli(home, "disable", "github")
    assert disabled.returncode == 0 and "Disabled skill 'github'" in disabled.stdout
    enabled = run_cli(home, "enable", "tmux")
    assert enabled.returncode == 0, enabled.stderr
    saved = yaml.safe_load((home / "config.yaml").read_text())
    assert saved["skills"]["disabled"] == ["github"] and saved["model"] == "openai/kept"
    assert saved["temperature"] == 0.7
    assert [line.split()[4] for line in run_cli(home, "list").stdout.splitlines() if line.startswith("github")] == ["no"]

    unknown = run_cli(home, "disable", "no-such-skill")
    assert unknown.returncode == 1 and "no skill named 'no-such-skill'" in unknown.stderr
    broken = "skills:\n  disabled: [github]\ntemperature: warm\n"
    (home / "config.yaml").write_text(broken)
    refused = run_cli(home, "enable", "github")
    assert refused.returncode == 1 and "fix it before changing settings" in refused.stderr
    assert (home / "config.yaml").read_text() == broken


# --- in a running core ---------------------------------------------------------------------------

async def test_mention_inlines_the_body_for_one_turn_only(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    folder = core.workspace / "skills" / "haiku"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: haiku\ndescription: Answer in haiku.\n---\nCount 5-7-5 syllables.\n")
    fake.add({"content": "Autumn moonlight"}, {"content": "plain"})
    assert isinstance(await chat.ask("Write about the moon, $haiku style"), TurnFinished)
    first = fake.requests[0]["messages"]
    assert "<name>haiku</name>" in first[0]["content"]
    assert "Count 5-7-5 syllables." in json.dumps(first[-1]) and "Count 5-7-5" not in first[0]["content"]

    await chat.ask("and now the sun")
    second = json.dumps(fake.requests[1]["messages"])
    assert "Count 5-7-5 syllables." not in second and "Write about the moon, $haiku style" in second
    saved = "".join(p.read_text() for p in (core.home.data_dir / "sessions").glob("*.jsonl"))
    assert "$haiku" in saved and "Count 5-7-5" not in saved


async def test_skill_locations_are_readable_with_workspace_restriction(
        tmp_path: Path, home_dir: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.core import build_core

    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    user_skill = tmp_path / "user" / ".agents" / "skills" / "mine"
    (user_skill / "references").mkdir(parents=True)
    (user_skill / "SKILL.md").write_text("---\nname: mine\ndescription: Mine.\n---\nRead references/x.md\n")
    (user_skill / "references" / "x.md").write_text("reference text")
    write_config(home_dir, model="openai/test", api_base=fake.base_url)
    built = build_core()
    assert built.config.tools.restrict_to_workspace
    ctx = ToolContext("cli:t")
    for path in (bundled("skills") / "weather" / "SKILL.md", user_skill / "SKILL.md", user_skill / "references" / "x.md"):
        outcome = await built.tools.run("read_file", {"path": str(path)}, ctx)
        assert outcome.ok, outcome.output
    written = await built.tools.run("write_file", {"path": str(user_skill / "SKILL.md"), "content": "x"}, ctx)
    assert not written.ok
    assert str(user_skill / "SKILL.md") in built.context.system_prompt()

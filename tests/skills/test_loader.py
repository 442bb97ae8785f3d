"""Skill discovery, frontmatter parsing, availability and the prompt sections, on real folders."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

import pytest
import yaml

from desktop.agent.context import ContextBuilder
from desktop.core import Core
from desktop.kernel.bus import TurnFinished
from desktop.settings import Settings, SettingsError
from desktop.skills import loader as loader_module
from desktop.skills.frontmatter import ERROR, WARNING, current_os
from desktop.skills.loader import MAX_SKILL_FOLDERS, SkillsLoader, SkillStatus, set_skill_enabled
from desktop.workspace.layout import ensure_workspace
from tests.conftest import Conversation, session_lines
from tests.fakeserver import FakeOpenAI


def make_skill(root: Path, folder: str, frontmatter: str, body: str = "Do the thing.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter.strip()}\n---\n{body}", encoding="utf-8")
    return path


def simple(name: str, description: str = "Does things. Use when asked.", extra: str = "") -> str:
    return f"name: {name}\ndescription: {description}\n{extra}"


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    return {source: tmp_path / source for source in ("workspace", "builtin", "user")}


def loader_for(roots: dict[str, Path], disabled: list[str] | None = None) -> SkillsLoader:
    names = disabled if disabled is not None else []
    return SkillsLoader(list(roots.items()), lambda: names)


def one(loader: SkillsLoader, name: str) -> SkillStatus:
    (status,) = [s for s in loader.scan() if s.name == name]
    return status


def messages(status: SkillStatus, level: str) -> list[str]:
    return [d.message for d in status.doc.diagnostics if d.level == level]


# --- frontmatter ---------------------------------------------------------------------------------

def test_block_scalar_and_quoted_colons(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "notes", "name: notes\ndescription: |-\n  Keeps notes.\n  Use when: the user says 'note'.\n")
    make_skill(roots["workspace"], "quoted", 'name: quoted\ndescription: "Use when: a colon appears: twice"\n')
    loader = loader_for(roots)
    notes, quoted = one(loader, "notes"), one(loader, "quoted")
    assert notes.doc.description == "Keeps notes.\nUse when: the user says 'note'."
    assert quoted.doc.description == "Use when: a colon appears: twice"
    assert notes.doc.diagnostics == () and quoted.doc.diagnostics == ()
    summary = loader.prompt_sections()[-1]
    assert "<description>Keeps notes. Use when: the user says 'note'.</description>" in summary


def test_crlf_and_bom(roots: dict[str, Path]) -> None:
    path = roots["workspace"] / "win" / "SKILL.md"
    path.parent.mkdir(parents=True)
    text = "---\r\nname: win\r\ndescription: Saved on Windows.\r\n---\r\n# Steps\r\n\r\nStep one.\r\n"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    status = one(loader_for(roots), "win")
    assert status.doc.diagnostics == ()
    assert status.doc.description == "Saved on Windows."
    assert status.doc.body == "# Steps\n\nStep one."


def test_metadata_as_json_string_mapping_and_openclaw_fallback(roots: dict[str, Path]) -> None:
    ws = roots["workspace"]
    make_skill(ws, "json-meta", simple("json-meta", extra='metadata: \'{"nanobot": {"emoji": "🐙", "always": true, '
                                                           '"requires": {"bins": ["sh"]}, "homepage": "https://x.org"}}\''))
    make_skill(ws, "yaml-meta", simple("yaml-meta", extra="metadata:\n  nanobot:\n    emoji: '🌤️'\n    requires:\n"
                                                           "      env: [SOME_TOKEN]\n    install:\n"
                                                           "      - 'brew install thing'\n"
                                                           "      - {kind: apt, package: thing}\n"))
    make_skill(ws, "claw", simple("claw", extra='metadata: {"openclaw": {"emoji": "🦞", "os": ["macos", "linux"]}}'))
    make_skill(ws, "top-always", simple("top-always", extra="always: true"))
    loader = loader_for(roots)
    j, y, c, t = (one(loader, n).doc for n in ("json-meta", "yaml-meta", "claw", "top-always"))
    assert (j.emoji, j.always, j.bins, j.homepage) == ("🐙", True, ("sh",), "https://x.org")
    assert (y.emoji, y.env, y.install) == ("🌤️", ("SOME_TOKEN",), ("brew install thing", "apt thing"))
    assert (c.emoji, c.os) == ("🦞", ("darwin", "linux"))
    assert t.always is True
    assert all(d.diagnostics == () for d in (j, y, c, t))


def test_every_agent_skills_and_claude_field_is_tolerated(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "full", """
name: full
description: Uses every field.
license: Apache-2.0
compatibility: Needs network access
allowed-tools: Bash(git:*) Read
disable-model-invocation: false
user-invocable: true
argument-hint: "[file]"
model: sonnet
context: fork
hooks: {}
metadata:
  author: someone
  version: "1.0"
""")
    status = one(loader_for(roots), "full")
    assert status.doc.diagnostics == () and status.in_effect


def test_broken_skills_are_skipped_with_a_diagnostic(roots: dict[str, Path]) -> None:
    ws = roots["workspace"]
    make_skill(ws, "no-desc", "name: no-desc")
    make_skill(ws, "bad-yaml", "name: bad-yaml\ndescription: Use when: things happen")
    make_skill(ws, "not-text", "name: not-text\ndescription: [1, 2]")
    (ws / "no-front").mkdir()
    (ws / "no-front" / "SKILL.md").write_text("# Just markdown\n", encoding="utf-8")
    (ws / "latin1").mkdir()
    (ws / "latin1" / "SKILL.md").write_bytes("---\nname: latin1\ndescription: Café\n---\nx\n".encode("latin-1"))
    make_skill(ws, "huge", simple("huge"), body="x" * (1024 * 1024 + 1))
    make_skill(ws, "fine", simple("fine"))
    loader = loader_for(roots)
    errors = {s.name: messages(s, ERROR) for s in loader.scan()}
    assert "no description" in errors["no-desc"][0]
    assert "not valid YAML at line 3" in errors["bad-yaml"][0] and "quotes" in errors["bad-yaml"][0]
    assert "description must be text" in errors["not-text"][0]
    assert "no frontmatter" in errors["no-front"][0]
    assert "not UTF-8" in errors["latin1"][0]
    assert "limit is 1,048,576" in errors["huge"][0]
    assert errors["fine"] == []
    assert [s.name for s in loader.active()] == ["fine"]
    assert "<name>fine</name>" in loader.prompt_sections()[0]
    assert "no-desc" not in "".join(loader.prompt_sections())


@pytest.mark.parametrize(("folder", "name", "expected"), [
    ("My_Skill", "My_Skill", "may use only a-z"),
    ("lead", "-lead", "may use only a-z"),
    ("trail", "trail-", "may use only a-z"),
    ("dou--ble", "dou--ble", "may use only a-z"),
    ("x" * 65, "x" * 65, "must be 1-64 characters"),
    ("folder", "other", "does not match its folder 'folder'"),
])
def test_bad_names_load_with_a_warning(roots: dict[str, Path], folder: str, name: str, expected: str) -> None:
    make_skill(roots["workspace"], folder, f"name: '{name}'\ndescription: Fine otherwise.")
    status = one(loader_for(roots), folder)
    assert status.in_effect
    assert any(expected in m for m in messages(status, WARNING)), messages(status, WARNING)
    assert messages(status, ERROR) == []


def test_long_description_and_missing_name_warn(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "wordy", simple("wordy", description="a" * 1025))
    make_skill(roots["workspace"], "anon", "description: No name given.")
    loader = loader_for(roots)
    assert messages(one(loader, "wordy"), WARNING) == ["description is 1025 characters; keep it under 1024"]
    assert messages(one(loader, "anon"), WARNING) == ["no 'name' field: using the folder name"]
    assert {s.name for s in loader.active()} == {"wordy", "anon"}


def test_misspelled_fields_are_named_with_the_field_meant(roots: dict[str, Path]) -> None:
    ws = roots["workspace"]
    make_skill(ws, "typo", "name: typo\ndescripton: Says what it does.")
    make_skill(ws, "loads", """
name: loads
description: Works.
licence: MIT
x-vendor-field: kept quietly
metadata:
  nanobot:
    emoij: "✨"
    requires:
      bin: [git]
""")
    loader = loader_for(roots)
    (error,) = messages(one(loader, "typo"), ERROR)
    assert "no description" in error and "'descripton' looks like a misspelling of it" in error
    status = one(loader, "loads")
    assert status.in_effect and messages(status, ERROR) == []
    assert messages(status, WARNING) == ["unknown field 'licence': did you mean 'license'?",
                                         "unknown field 'metadata.nanobot.emoij': did you mean 'emoji'?",
                                         "unknown field 'requires.bin': did you mean 'bins'?"]


# --- sources, precedence, disabled ---------------------------------------------------------------

def test_workspace_overrides_builtin_overrides_user(roots: dict[str, Path]) -> None:
    for source in ("workspace", "builtin", "user"):
        make_skill(roots[source], "shared", simple("shared", description=f"The {source} copy."))
    make_skill(roots["builtin"], "shipped", simple("shipped"))
    make_skill(roots["user"], "mine", simple("mine"))
    loader = loader_for(roots)
    shared = [s for s in loader.scan() if s.name == "shared"]
    assert [(s.source, s.shadowed_by) for s in shared] == [("workspace", None), ("builtin", "workspace"),
                                                         ("user", "workspace")]
    assert {s.name: s.source for s in loader.active()} == {"shared": "workspace", "shipped": "builtin", "mine": "user"}
    summary = loader.prompt_sections()[-1]
    assert "The workspace copy." in summary and "The builtin copy." not in summary
    assert str(roots["workspace"] / "shared" / "SKILL.md") in summary


def test_a_broken_override_does_not_hide_the_working_skill(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "shared", "name: shared")
    make_skill(roots["builtin"], "shared", simple("shared", description="Built-in copy."))
    loader = loader_for(roots)
    assert [(s.source, s.in_effect) for s in loader.scan()] == [("workspace", False), ("builtin", True)]


def test_missing_roots_folders_without_skill_md_and_hidden_folders_are_ignored(roots: dict[str, Path]) -> None:
    (roots["workspace"] / "empty-folder").mkdir(parents=True)
    make_skill(roots["workspace"], ".hidden", simple(".hidden"))
    (roots["workspace"] / "README.md").write_text("not a skill")
    loader = loader_for(roots)
    assert loader.scan() == [] and loader.prompt_sections() == []


async def test_disabled_skills_are_hidden_and_toggle_through_config(roots: dict[str, Path], tmp_path: Path) -> None:
    make_skill(roots["builtin"], "weather", simple("weather"))
    make_skill(roots["builtin"], "github", simple("github"))
    config_path = tmp_path / "config.yaml"
    config_path.write_text("skills:\n  disabled: [weather]\n", encoding="utf-8")
    settings = Settings.open(config_path)
    loader = SkillsLoader(list(roots.items()), lambda: settings.config.skills.disabled)
    assert [(s.name, s.enabled) for s in loader.scan()] == [("github", True), ("weather", False)]
    assert "weather" not in loader.prompt_sections()[0]
    assert loader.expand_mentions("try $weather") == ""

    await set_skill_enabled(settings, "weather", True)
    await set_skill_enabled(settings, "github", False)
    assert "<name>weather</name>" in loader.prompt_sections()[0]
    assert "<name>github</name>" not in loader.prompt_sections()[0]
    assert yaml.safe_load(config_path.read_text(encoding="utf-8"))["skills"]["disabled"] == ["github"]


async def test_toggling_refuses_to_overwrite_a_broken_config(tmp_path: Path) -> None:
    config_path = tmp_path / "config.yaml"
    original = "skills:\n  disabled: [weather]\ntypo_key: 1\n"
    config_path.write_text(original, encoding="utf-8")
    settings = Settings.open(config_path)
    with pytest.raises(SettingsError, match="fix it before changing settings"):
        await set_skill_enabled(settings, "github", False)
    assert config_path.read_text(encoding="utf-8") == original


# --- availability and the summary ----------------------------------------------------------------

def fake_program(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / (f"{name}.bat" if sys.platform == "win32" else name)
    program.write_text("@echo off\n" if sys.platform == "win32" else "#!/bin/sh\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)


def test_availability_from_bins_env_and_os(roots: dict[str, Path], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    fake_program(bin_dir, "present-tool")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("SET_TOKEN", "x")
    monkeypatch.delenv("UNSET_TOKEN", raising=False)
    other_os = "windows" if current_os() != "windows" else "linux"
    here = {"darwin": "macos", "linux": "linux", "windows": "windows"}[current_os()]
    ws = roots["workspace"]
    make_skill(ws, "ready", simple("ready", extra="metadata: {nanobot: {requires: {bins: [present-tool], "
                                                  f"env: [SET_TOKEN]}}, os: [{here}]}}}}"))
    make_skill(ws, "needy", simple("needy", extra="metadata: {nanobot: {requires: {bins: [present-tool, "
                                                  f"absent-tool-xyz], env: [UNSET_TOKEN]}}, os: [{other_os}]}}}}"))
    loader = loader_for(roots)
    ready, needy = one(loader, "ready"), one(loader, "needy")
    assert ready.available and ready.missing == ()
    assert needy.missing == ("CLI: absent-tool-xyz", "ENV: UNSET_TOKEN", f"OS: {other_os}")
    summary = loader.prompt_sections()[-1]
    assert '<skill available="true"><name>ready</name>' in summary
    assert '<skill available="false"><name>needy</name>' in summary
    assert f"<requires>CLI: absent-tool-xyz, ENV: UNSET_TOKEN, OS: {other_os}</requires>" in summary
    assert summary.count("</requires>") == 1

    monkeypatch.setenv("UNSET_TOKEN", "now set")  # picked up on the next build, no restart
    assert "ENV: UNSET_TOKEN" not in loader.prompt_sections()[-1]


@pytest.mark.parametrize("trusted_after_ns", [None, 0], ids=["as shipped", "folder times trusted at once"])
def test_a_cli_installed_or_removed_while_the_app_runs_is_seen_at_the_next_prompt(
        roots: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted_after_ns: int | None) -> None:
    """Which commands are on PATH is remembered between prompts (looking costs a stat per PATH folder per name):
    installing the CLI a skill needs, removing it, or a new PATH still shows at the next prompt, without a
    restart; also once the folders' times are trusted, as they are for folders not changed in the last seconds
    (most PATH folders), and after a program set a folder's modification time back."""
    if trusted_after_ns is not None:
        monkeypatch.setattr(loader_module._Commands, "RECENT_NS", trusted_after_ns)
    bin_dir, other = tmp_path / "bin", tmp_path / "other-bin"
    bin_dir.mkdir()
    fake_program(other, "late-tool-xyz")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    make_skill(roots["workspace"], "needs-cli", simple("needs-cli", extra="metadata: {nanobot: {requires: "
                                                                          "{bins: [late-tool-xyz]}}}"))
    loader = loader_for(roots)

    def missing() -> tuple[str, ...]:
        return one(loader, "needs-cli").missing

    assert missing() == missing() == ("CLI: late-tool-xyz",)
    before = bin_dir.stat()
    fake_program(bin_dir, "late-tool-xyz")
    os.utime(bin_dir, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `tar` or `cp -p` may leave it
    assert missing() == missing() == ()
    (bin_dir / "late-tool-xyz").unlink()
    assert missing() == missing() == ("CLI: late-tool-xyz",)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    assert missing() == missing() == ()


def test_always_on_skills_are_inlined_only_when_available(roots: dict[str, Path]) -> None:
    ws = roots["workspace"]
    make_skill(ws, "house-rules", simple("house-rules", extra="metadata: {nanobot: {always: true}}"),
               body="Always answer in haiku.\n")
    make_skill(ws, "needs-tool", simple("needs-tool", extra="metadata: {nanobot: {always: true, requires: "
                                                            "{bins: [absent-tool-xyz]}}}"), body="Tool body.\n")
    make_skill(ws, "on-demand", simple("on-demand"), body="On-demand body.\n")
    active, summary = loader_for(roots).prompt_sections()
    assert active.startswith("# Active skills")
    assert "Always answer in haiku." in active and "---\nname" not in active
    assert "Tool body." not in active and "On-demand body." not in summary
    assert "<name>needs-tool</name>" in summary and "<name>house-rules</name>" not in summary
    assert "read_file" in summary


def test_a_skill_that_calls_a_tool_is_offered_only_to_an_agent_that_has_it(roots: dict[str, Path]) -> None:
    ws = roots["workspace"]
    make_skill(ws, "reminders", simple("reminders", extra="metadata: {nanobot: {requires: {tools: [cron]}}}"))
    make_skill(ws, "plain", simple("plain"))
    loader = loader_for(roots)
    assert not messages(one(loader, "reminders"), WARNING) and one(loader, "reminders").available
    assert "<name>reminders</name>" in loader.prompt_sections()[0]  # no tool list given: nothing is left out
    assert "<name>reminders</name>" in loader.prompt_sections(["exec", "cron"])[0]
    (summary,) = loader.prompt_sections(["exec", "read_file"])
    assert "<name>reminders</name>" not in summary and "<name>plain</name>" in summary


def test_summary_text_is_xml_escaped(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "a&b", "name: a&b\ndescription: 'Turns <b>bold</b> & \"quotes\" into </skill>'")
    summary = loader_for(roots).prompt_sections()[0]
    assert "<name>a&amp;b</name>" in summary
    assert "Turns &lt;b&gt;bold&lt;/b&gt; &amp; \"quotes\" into &lt;/skill&gt;" in summary
    assert str(roots["workspace"] / "a&b").replace("&", "&amp;") in summary
    assert summary.count("</skill>") == 1


def test_model_invocation_disabled_keeps_skill_out_of_the_prompt_but_mentionable(roots: dict[str, Path]) -> None:
    make_skill(roots["workspace"], "deploy", simple("deploy", extra="disable-model-invocation: true"),
               body="Deploy steps.\n")
    loader = loader_for(roots)
    assert loader.prompt_sections() == []
    assert "Deploy steps." in loader.expand_mentions("run $deploy now")


# --- cache ---------------------------------------------------------------------------------------

def test_warm_rebuild_reuses_parsed_files_and_a_changed_file_is_picked_up(roots: dict[str, Path]) -> None:
    path = make_skill(roots["workspace"], "cached", simple("cached", description="First version."))
    loader = loader_for(roots)
    assert "First version." in loader.prompt_sections()[0]

    before = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("First", "Other"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size and mtime: cache still valid
    assert "First version." in loader.prompt_sections()[0], "a warm rebuild must not re-read the file"

    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert "Other version." in loader.prompt_sections()[0]

    path.write_text(path.read_text(encoding="utf-8").replace("Other version.", "Third, longer version."),
                    encoding="utf-8")
    assert "Third, longer version." in loader.prompt_sections()[0]
    path.unlink()
    assert loader.prompt_sections() == []


# --- $skill mentions -----------------------------------------------------------------------------

def test_mentions_inline_known_skills_once(roots: dict[str, Path]) -> None:
    make_skill(roots["builtin"], "weather", simple("weather", extra="metadata: {nanobot: {requires: "
                                                                    "{bins: [absent-tool-xyz]}}}"),
               body="Weather steps.\n")
    make_skill(roots["builtin"], "github", simple("github"), body="GitHub steps.\n")
    loader = loader_for(roots)
    text = loader.expand_mentions("Use $weather, then $github and $weather again; it costs $5 or $HOME")
    assert text.count("Weather steps.") == 1 and text.index("Weather steps.") < text.index("GitHub steps.")
    assert "requirements are not met (CLI: absent-tool-xyz)" in text
    assert str(roots["builtin"] / "weather") in text
    assert loader.expand_mentions("no mention here, US$weather either") == ""


# --- the system prompt ---------------------------------------------------------------------------

def test_system_prompt_sections_in_order(roots: dict[str, Path]) -> None:
    workspace = roots["workspace"].parent / "ws"
    ensure_workspace(workspace)
    (workspace / "AGENTS.md").write_text("Agent rules here.", encoding="utf-8")
    (workspace / "memory" / "MEMORY.md").write_text("The user likes tea.", encoding="utf-8")
    make_skill(workspace / "skills", "rules", simple("rules", extra="always: true"), body="Rule body.\n")
    make_skill(roots["builtin"], "weather", simple("weather"))
    skills = SkillsLoader([("workspace", workspace / "skills"), ("builtin", roots["builtin"])])
    prompt = ContextBuilder(workspace, skills).system_prompt()
    order = [prompt.index(marker) for marker in ("# Nanobot", "Agent rules here.", "# Memory", "The user likes tea.",
                                                 "# Active skills", "Rule body.", "# Skills", "<name>weather</name>")]
    assert order == sorted(order)

    plain = ContextBuilder(workspace, SkillsLoader([])).system_prompt()
    assert "# Active skills" not in plain and "<skills>" not in plain and plain.endswith("The user likes tea.")


def test_skills_that_lead_out_of_their_folder_are_listed_broken_and_never_read(tmp_path: Path) -> None:
    """A sandboxed command can link a workspace skill (or its SKILL.md) to anywhere: the loader reads the
    workspace's skills within the workspace (and the others within their folder), so such a skill says why
    it is broken and nothing of the target is read."""
    roots = {"workspace": tmp_path / "ws" / "skills", "user": tmp_path / "user" / "skills"}
    outside = make_skill(tmp_path / "elsewhere", "hidden", simple("hidden"), body="HIDDEN BODY\n").parent
    make_skill(roots["workspace"], "real", simple("real"))
    (roots["workspace"] / "alias").symlink_to("real")  # a link that stays inside is followed
    (roots["workspace"] / "linked").symlink_to(outside)
    (roots["workspace"] / "file-link").mkdir()
    (roots["workspace"] / "file-link" / "SKILL.md").symlink_to(outside / "SKILL.md")
    roots["user"].mkdir(parents=True)
    (roots["user"] / "shared").symlink_to(outside)
    statuses = {(s.name, s.source): s for s in loader_for(roots).scan()}
    for key in (("linked", "workspace"), ("file-link", "workspace"), ("shared", "user")):
        [problem] = statuses[key].doc.diagnostics
        assert problem.level == ERROR and "is a link that leads outside" in problem.message, key
    assert statuses[("alias", "workspace")].doc.loadable and statuses[("real", "workspace")].doc.loadable
    assert "HIDDEN BODY" not in "\n".join(loader_for(roots).prompt_sections() + [str(statuses)])


# --- text that is not well formed (desktop/kernel/wellformed.py) ----------------------------------
# A sandboxed command writes the workspace's skills folder. A folder name that is not UTF-8, or a lone surrogate's
# escape in the frontmatter, once put a lone surrogate in the system prompt: every turn of every chat failed with an
# internal error while the skill was there. Through real turns.

def system_prompt(fake: FakeOpenAI) -> str:
    return str(fake.requests[-1]["messages"][0]["content"])


async def test_a_skill_folder_named_in_bytes_that_are_not_utf8_is_broken_and_the_chats_go_on(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    skills = os.path.join(os.fsencode(core.workspace), b"skills")
    for name in (b"caf\xe9", b"stray-\xff\xfe", b"half-\xf0\x9f"):
        os.makedirs(os.path.join(skills, name))
        with open(os.path.join(skills, name, b"SKILL.md"), "w", encoding="utf-8") as handle:
            handle.write("---\nname: brew\ndescription: Brews coffee.\n---\nBrew.\n")
    fake.add({"content": "Hello."}, {"content": "Still here."})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "Hello."
    assert "Brews coffee" not in system_prompt(fake)
    assert session_lines(core, chat.key)[-1]["content"] == "Hello."
    assert isinstance(await chat.ask("and now?"), TurnFinished)

    broken = {s.name: messages(s, ERROR) for s in core.context.skills.scan() if not s.doc.loadable}
    assert broken == {name: ["its folder's name is not UTF-8 text; rename the folder"]
                      for name in ("caf\ufffd", "stray-\ufffd\ufffd", "half-\ufffd\ufffd")}


async def test_stray_escapes_in_a_skill_s_frontmatter_are_mended_in_the_prompt(
        core: Core, chat: Conversation, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its metadata as a JSON text (the Agent Skills format's way), whose escapes JSON reads as lone surrogates;
    and, where PyYAML has no libyaml, the YAML's own escapes, a whole pair's read as two halves."""
    monkeypatch.setattr("desktop.skills.frontmatter._YAML_LOADER", yaml.SafeLoader)
    make_skill(core.workspace / "skills", "brew", 'name: brew\ndescription: "Makes \\ud83d\\ude00 tea \\udcff"\n'
               'metadata: \'{"nanobot": {"requires": {"bins": ["pot-\\ud800", "kettle-\\udcff"]}}}\'')
    fake.add({"content": "Hello."}, {"content": "Still here."})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "Hello."
    assert "<description>Makes \U0001f600 tea \ufffd</description>" in system_prompt(fake)
    assert "<requires>CLI: pot-\ufffd, CLI: kettle-\ufffd</requires>" in system_prompt(fake)
    assert session_lines(core, chat.key)[-1]["content"] == "Hello."
    assert isinstance(await chat.ask("and now?"), TurnFinished)


async def test_a_skill_whose_frontmatter_multiplies_by_aliases_is_broken_and_the_next_turn_is_answered(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    """A sandboxed command plants it: a few hundred bytes that read as 387 million strings. Before, the next
    turn's skill scan grew the app's own memory by about 100 MB a second until none was left."""
    lines = ["---", "name: boom", "description: Multiplies.", "x:", "  a: &a [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"  {now}: &{now} [" + ", ".join([f"*{was}"] * 9) + "]" for was, now in zip("abcdefgh", "bcdefghi")]
    planted = "\n".join([*lines, "---", "Boom."])
    fake.add({"tool_calls": [{"name": "exec", "arguments": {
        "command": f"mkdir -p skills/boom && printf '%s\\n' {shlex.quote(planted)} > skills/boom/SKILL.md"}}]},
        {"content": "Planted."}, {"content": "Answered."})
    assert isinstance(await chat.ask("plant it"), TurnFinished)
    assert (core.workspace / "skills" / "boom" / "SKILL.md").read_text() == planted + "\n"
    end = await chat.ask("and now?", timeout=30)
    assert isinstance(end, TurnFinished) and end.content == "Answered."
    assert "Multiplies" not in system_prompt(fake)
    [boom] = [s for s in core.context.skills.scan() if s.name == "boom"]
    assert messages(boom, ERROR) == ["frontmatter uses a YAML alias (*name); write the value out where it is used"]


@pytest.mark.parametrize("frontmatter, level, problem", [
    (f"metadata: '{'[' * 100_000}{']' * 100_000}'", WARNING,
     "metadata is text but not valid JSON (nested too deeply); ignored"),
    (f"x: {'[' * 900}{']' * 900}", ERROR, "frontmatter is nested too deeply to read"),
], ids=["JSON metadata", "YAML"])
async def test_a_skill_nested_past_what_the_reader_can_follow_is_broken_and_the_chats_go_on(
        core: Core, chat: Conversation, fake: FakeOpenAI, frontmatter: str, level: str, problem: str) -> None:
    """Lists in lists, as a sandboxed command can write them in a workspace skill: its metadata as a JSON text (the
    Agent Skills format's way) 100,000 deep, or YAML 900 deep (within libyaml's own limit). Before, reading either
    raised out of the skill scan, and every turn of every chat failed."""
    make_skill(core.workspace / "skills", "deep", f"name: deep\ndescription: Nests.\n{frontmatter}")
    fake.add({"content": "Hello."})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "Hello."
    [deep] = [s for s in core.context.skills.scan() if s.name == "deep"]
    assert messages(deep, level) == [problem]


async def test_a_workspace_skills_folder_of_thousands_is_read_only_so_far_and_says_so(
        core: Core, chat: Conversation, fake: FakeOpenAI, caplog: pytest.LogCaptureFixture) -> None:
    """A loop in one sandboxed command makes a skill folder per name, millions of them. Every prompt of every chat
    looked at each (20,000 took a second and 11 MB of the app's memory, each turn) and summarised every skill in
    it. Now the first MAX_SKILL_FOLDERS are read, and the log says the rest are not."""
    skills = core.workspace / "skills"
    for i in range(MAX_SKILL_FOLDERS + 100):
        make_skill(skills, f"s{i:04}", simple(f"s{i:04}"))
    fake.add({"content": "Hello."})
    end = await chat.ask("hi")
    assert isinstance(end, TurnFinished) and end.content == "Hello."
    assert system_prompt(fake).count(f"<location>{skills}/s") == MAX_SKILL_FOLDERS
    assert f"skills holds more than {MAX_SKILL_FOLDERS} entries; only {MAX_SKILL_FOLDERS} of them are read as " \
           "skills" in caplog.text

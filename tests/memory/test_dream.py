"""Dream against the scripted model server: findings applied with the real file tools, one git commit
per run, cursor and compaction, failures that change nothing, restore, and the command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from desktop.config import Config
from desktop.core import Core
from desktop.kernel.notices import Notice, OpenMemoryChange
from desktop.memory import Memory
from desktop.memory.dream import DreamError, parse_findings
from desktop.memory.git_history import GitError
from desktop.memory.hand_edit import save_by_hand
from desktop.scheduler import Scheduler
from desktop.scheduler.scheduler import BUSY_RETRY
from desktop.scheduler.settings import SchedulesConfig
from desktop.skills.loader import MAX_SKILL_FOLDERS
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.scheduler.fakes import ManualClock, ManualTimer

FINDINGS = ("[USER] Name is Sam\n"
            "[MEMORY] Project Atlas runs on Postgres 16\n"
            "[SKILL] release-notes: collect merged changes and write release notes\n"
            "Some prose the parser ignores.")
SKILL = "---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\n# Steps\n1. ...\n"


def add_history(core: Core, *texts: str) -> None:
    for text in texts:
        core.get(Memory).store.append_history("desktop:abc", text)


def apply_steps() -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "USER.md", "old_text": "- Name:",
                                                            "new_text": "- Name: Sam"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "memory/MEMORY.md", "old_text": "Nanobot keeps this up to date.",
            "new_text": "Nanobot keeps this up to date.\n\n## Projects\n- Atlas runs on Postgres 16"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "skills/release-notes/SKILL.md",
                                                             "content": SKILL}}]},
        {"content": "Updated USER.md and MEMORY.md, added release-notes."},
    ]


async def subjects(core: Core) -> list[str]:
    return [c.subject for c in await core.get(Memory).git.log()]


def recorded_files(core: Core) -> list[str]:
    """The paths in the newest recorded version (read with dulwich from the history in the data folder)."""
    from dulwich.object_store import iter_tree_contents
    from dulwich.repo import Repo

    with Repo(str(core.get(Memory).git.repository)) as repo:
        tree = repo[repo.head()].tree  # type: ignore[attr-defined]
        return sorted(e.path.decode() for e in iter_tree_contents(repo.object_store, tree) if e.path)


async def test_dream_applies_findings_commits_and_advances(core: Core, fake: FakeOpenAI) -> None:
    add_history(core, "Sam said their name and that Atlas uses Postgres 16.", "Sam wrote release notes again.")
    fake.add({"content": FINDINGS}, *apply_steps())
    result = await core.get(Memory).dream.run()

    phase1 = fake.requests[0]
    assert "tools" not in phase1
    sent = phase1["messages"][-1]["content"]
    assert "Atlas uses Postgres 16" in sent and "## USER.md" in sent and "## memory/MEMORY.md" in sent
    assert {t["function"]["name"] for t in fake.requests[1]["tools"]} == {"read_file", "edit_file", "write_file"}
    assert "[USER] Name is Sam" in fake.requests[1]["messages"][-1]["content"]

    ws = core.workspace
    assert "- Name: Sam" in (ws / "USER.md").read_text()
    assert "Atlas runs on Postgres 16" in (ws / "memory" / "MEMORY.md").read_text()
    assert (ws / "skills" / "release-notes" / "SKILL.md").read_text() == SKILL
    assert result.processed == 2
    assert result.findings == ["[USER] Name is Sam", "[MEMORY] Project Atlas runs on Postgres 16",
                               "[SKILL] release-notes: collect merged changes and write release notes"]
    assert result.changed == ["USER.md", "memory/MEMORY.md", "skills/release-notes/SKILL.md"]
    assert core.get(Memory).store.dream_cursor() == 2 and not core.get(Memory).store.has_unprocessed()

    log = await core.get(Memory).git.log()
    assert [c.subject for c in log] == [
        "Dream: update USER.md, memory/MEMORY.md, skills/release-notes/SKILL.md",
        "Baseline: memory files before any recorded change"]
    assert log[0].rev == result.rev and "- [USER] Name is Sam" in log[0].body
    _, files, diff = await core.get(Memory).git.show(result.rev[:7])
    assert files == result.changed and "+- Name: Sam" in diff
    assert recorded_files(core) == ["SOUL.md", "USER.md", "memory/MEMORY.md", "skills/release-notes/SKILL.md"]
    assert not (ws / ".git").exists()  # the history lives in the app's data folder, out of the sandbox's reach
    assert core.get(Memory).git.repository.is_relative_to(core.home.data_dir)


async def test_dream_tools_cannot_leave_the_memory_files(core: Core, fake: FakeOpenAI) -> None:
    add_history(core, "something")
    builtin = next(p.parent.name for p in (Path(__file__).parents[2] / "skills").glob("*/SKILL.md"))
    fake.add({"content": "[MEMORY] x\n[SKILL] weather-check: check weather"},
             {"tool_calls": [{"name": "write_file", "arguments": {"path": "AGENTS.md", "content": "hacked"}},
                             {"name": "write_file", "arguments": {"path": f"skills/{builtin}/SKILL.md",
                                                                  "content": "hacked"}},
                             {"name": "write_file", "arguments": {"path": "memory/history.jsonl", "content": ""}},
                             {"name": "edit_file", "arguments": {"path": "../outside.md", "old_text": "a",
                                                                 "new_text": "b"}}]},
             {"content": "Could not apply."})
    agents = (core.workspace / "AGENTS.md").read_text()
    result = await core.get(Memory).dream.run()
    results = [m["content"] for m in fake.requests[2]["messages"] if m["role"] == "tool"]
    assert "may only change USER.md, SOUL.md, memory/MEMORY.md" in results[0]
    assert f"a skill named '{builtin}' already exists" in results[1]
    assert "Error" in results[2] and "Error" in results[3]
    assert (core.workspace / "AGENTS.md").read_text() == agents
    assert not (core.workspace / "skills" / builtin).exists()
    assert json.loads(core.get(Memory).store.history_file.read_text())["content"] == "something"
    assert result.changed == [] and result.rev is None
    assert core.get(Memory).store.dream_cursor() == 1  # the run itself succeeded


async def test_failing_analysis_changes_nothing(core: Core, fake: FakeOpenAI) -> None:
    add_history(core, "Sam likes tea")
    before = {p: (core.workspace / p).read_text() for p in ("USER.md", "SOUL.md", "memory/MEMORY.md")}
    history_before = core.get(Memory).store.history_file.read_text()
    fake.add(*[{"status": 500}] * 4)  # the first try and three retries
    with pytest.raises(DreamError, match="analysis call failed"):
        await core.get(Memory).dream.run()
    assert {p: (core.workspace / p).read_text() for p in before} == before
    assert core.get(Memory).store.dream_cursor() == 0 and core.get(Memory).store.has_unprocessed()
    assert core.get(Memory).store.history_file.read_text() == history_before
    assert await subjects(core) in ([], ["Baseline: memory files before any recorded change"])
    fake.add({"content": "[SKIP]"})  # the next run retries the same entries
    assert (await core.get(Memory).dream.run()).processed == 1
    assert core.get(Memory).store.dream_cursor() == 1


async def test_stray_escapes_written_into_the_history_are_mended_and_dream_goes_on(core: Core, fake: FakeOpenAI) -> None:
    """history.jsonl lies in the workspace, which sandboxed commands write; a lone surrogate's escape there once made
    every run fail before it asked the model."""
    store = core.get(Memory).store
    store.history_file.parent.mkdir(exist_ok=True)
    with open(store.history_file, "a", encoding="utf-8") as handle:  # as `echo ... >> memory/history.jsonl` would
        handle.write('{"cursor": 1, "timestamp": "2026-11-28T10:00:00", "session_key": "x\\udcff", '
                     '"content": "high \\ud800, low \\udcff, reversed \\ude00\\ud83d, whole \\ud83d\\ude00"}\n')
    add_history(core, "Sam likes tea")
    fake.add({"content": "[SKIP]"}, {"content": "[SKIP]"})
    assert (await core.get(Memory).dream.run()).processed == 2
    assert "high \ufffd, low \ufffd, reversed \ufffd\ufffd, whole \U0001f600" in fake.requests[-1]["messages"][-1]["content"]
    assert store.dream_cursor() == 2
    add_history(core, "Sam likes green tea")
    assert (await core.get(Memory).dream.run()).processed == 1


async def test_skill_folders_named_in_bytes_that_are_not_utf8_are_named_mended_and_dream_goes_on(
        core: Core, fake: FakeOpenAI) -> None:
    """Dream tells the model which skill names are taken; such a folder's name (a sandboxed command can make one) once
    made every run fail before it asked the model."""
    skills = os.path.join(os.fsencode(core.workspace), b"skills")
    for name in (b"caf\xe9", b"stray-\xff\xfe", b"half-\xf0\x9f"):
        os.makedirs(os.path.join(skills, name))
    add_history(core, "Sam likes tea")
    fake.add({"content": "[SKIP]"})
    assert (await core.get(Memory).dream.run()).processed == 1
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert all(name in sent for name in ("caf\ufffd", "stray-\ufffd\ufffd", "half-\ufffd\ufffd"))
    add_history(core, "Sam likes green tea")
    fake.add({"content": "[SKIP]"})
    assert (await core.get(Memory).dream.run()).processed == 1


async def test_a_skills_folder_of_thousands_is_not_read_whole_and_dream_creates_no_skill_beside_it(
        core: Core, fake: FakeOpenAI) -> None:
    """A loop in one sandboxed command makes millions of skill folders. Dream listed them all, told the model every
    name (a prompt past any model's window: every run failed) and read each SKILL.md twice. Now it lists no more
    than MAX_SKILL_FOLDERS, says so, and creates no skill while it cannot tell which names are taken."""
    skills = core.workspace / "skills"
    for i in range(MAX_SKILL_FOLDERS + 100):
        (skills / f"s{i:04}").mkdir(parents=True)
        (skills / f"s{i:04}" / "SKILL.md").write_text(f"---\nname: s{i:04}\ndescription: S. Use for s.\n---\n")
    add_history(core, "Sam said their name and that Atlas uses Postgres 16.", "Sam wrote release notes again.")
    fake.add({"content": FINDINGS}, *apply_steps())
    result = await core.get(Memory).dream.run()
    for request in fake.requests[:2]:  # the analysis, and the first step of applying it
        sent = request["messages"][-1]["content"]
        assert sent.count(", s0") < MAX_SKILL_FOLDERS and f"more than {MAX_SKILL_FOLDERS}" in sent, sent[-500:]
    assert not (skills / "release-notes").exists()
    assert "skills/release-notes/SKILL.md" not in result.changed and "USER.md" in result.changed


async def test_failure_while_applying_keeps_whole_edits_and_the_cursor(core: Core, fake: FakeOpenAI) -> None:
    add_history(core, "Sam, Atlas")
    fake.add({"content": FINDINGS}, apply_steps()[0], *[{"status": 500}] * 4)
    with pytest.raises(DreamError, match="applying the findings failed"):
        await core.get(Memory).dream.run()
    assert "- Name: Sam" in (core.workspace / "USER.md").read_text()  # the finished edit, whole
    assert "Atlas" not in (core.workspace / "memory" / "MEMORY.md").read_text()
    assert core.get(Memory).store.dream_cursor() == 0
    assert (await subjects(core))[0] == "Dream (stopped early): update USER.md"


async def test_history_is_compacted_but_unprocessed_entries_stay(core: Core, fake: FakeOpenAI) -> None:
    add_history(core, *[f"entry {i} " + "word " * 40 for i in range(1300)])
    core.config.max_tokens = 100
    core.config.context_window_tokens = 100 + 1024 + 2 * 20_000  # half the budget holds ~300 entries
    fake.default = lambda body: {"content": "[SKIP]"}
    first = await core.get(Memory).dream.run()
    assert 0 < first.processed < 1300
    kept = core.get(Memory).store.read_history()
    assert kept[-1].cursor == 1300 and kept[0].cursor <= first.processed + 1  # nothing unprocessed dropped
    for _ in range(20):  # each run takes what half the budget holds: a handful of runs, or Dream is stuck
        if not core.get(Memory).store.has_unprocessed():
            break
        await core.get(Memory).dream.run()
    assert not core.get(Memory).store.has_unprocessed()
    kept = core.get(Memory).store.read_history()
    assert len(kept) == 1000 and kept[-1].cursor == 1300


async def test_restore_puts_files_back_as_a_new_commit(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    add_history(core, "Sam")
    template_user = (core.workspace / "USER.md").read_text()
    fake.add({"content": FINDINGS}, *apply_steps())
    dream = await core.get(Memory).dream.run()
    reply = await chat.ask(f"/dream-restore {dream.rev[:7]}")
    assert reply.content.startswith("Restored USER.md, memory/MEMORY.md, skills/release-notes/SKILL.md to before")
    assert (core.workspace / "USER.md").read_text() == template_user
    assert not (core.workspace / "skills" / "release-notes").exists()
    log = await core.get(Memory).git.log()
    assert log[0].subject.startswith("Restore USER.md") and log[1].rev == dream.rev
    undo = await core.get(Memory).git.restore_before(log[0].rev)  # a restore is itself undoable
    assert undo[0] is not None and "- Name: Sam" in (core.workspace / "USER.md").read_text()
    with pytest.raises(GitError, match="unknown revision"):
        await core.get(Memory).git.restore_before("deadbeef")


async def test_dream_commands_in_chat(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    assert (await chat.ask("/dream")).content == "Dream: no new history since the last run."
    assert (await chat.ask("/dream-log")).content == "No memory changes recorded yet."
    add_history(core, "Sam")
    fake.add({"content": FINDINGS}, *apply_steps())
    done = (await chat.ask("/dream")).content
    assert done.startswith("Dream: reviewed 1 history entries and updated USER.md")
    listing = (await chat.ask("/dream-log")).content
    assert "Dream: update USER.md" in listing and "Baseline" in listing
    rev = (await core.get(Memory).git.log())[0].short
    shown = (await chat.ask(f"/dream-log {rev}")).content
    assert "```diff" in shown and "+- Name: Sam" in shown
    assert "unknown revision" in (await chat.ask("/dream-log nope")).content
    assert (await chat.ask("/dream-restore")).content.startswith("Usage: /dream-restore REV")


async def test_scheduled_dream_runs_only_when_idle_with_new_history(core: Core, fake: FakeOpenAI) -> None:
    """Dream is the scheduler's system job: every schedules.dream_interval, deferred while a turn runs,
    no model call without new history, and a change to memory is notified with that change as target."""
    def dream_alone(config: Config) -> None:
        config.section(SchedulesConfig).heartbeat_interval = 0  # the other system job would come due on the same clock

    await core.settings.update(dream_alone)
    clock = ManualClock(datetime(2026, 5, 4, 8, 0, tzinfo=UTC))
    timer = ManualTimer(clock)
    scheduler = core.get(Scheduler)
    scheduler.clock, scheduler.timer = clock, timer
    scheduler.start()
    notes: list[Notice] = []
    core.bus.subscribe(lambda event: notes.append(event) if isinstance(event, Notice) else None)
    busy = False
    scheduler.busy = lambda: busy
    clock.advance(core.config.section(SchedulesConfig).dream_interval)
    assert scheduler.run_due() == ["dream"]
    await scheduler.settle()
    assert fake.requests == []  # no history yet: no model call
    add_history(core, "Sam")
    clock.advance(core.config.section(SchedulesConfig).dream_interval)
    busy = True  # a turn is running: deferred by 5 minutes, no model call
    scheduler.run_due()
    await scheduler.settle()
    assert fake.requests == [] and scheduler.next_due() == clock.now() + timedelta(seconds=BUSY_RETRY)
    busy = False
    fake.add({"content": FINDINGS}, *apply_steps())
    clock.advance(BUSY_RETRY)
    assert scheduler.run_due() == ["dream"]
    await scheduler.settle()
    assert len(fake.requests) == 5
    rev = (await core.get(Memory).git.log())[0].rev
    assert [(n.title, n.target) for n in notes] == [("Memory updated", OpenMemoryChange(rev))]
    assert notes[0].body.startswith("Dream updated ") and "USER.md" in notes[0].body


async def test_dream_interval_zero_turns_scheduled_dream_off(core: Core) -> None:
    def off(config: Config) -> None:
        config.section(SchedulesConfig).dream_interval = 0

    await core.settings.update(off)
    assert next(entry for entry in core.get(Scheduler).entries if entry.name == "dream").next_run() is None


def test_parse_findings_keeps_only_tagged_lines() -> None:
    text = "Here you go:\n- [user] likes tea\n[MEMORY-REMOVE] old meeting (2 months ago)\n[SKILL-REMOVE] x\n[SKIP]"
    assert parse_findings(text) == ["[USER] likes tea", "[MEMORY-REMOVE] old meeting (2 months ago)"]


def test_dream_command_line(home_dir: Path, fake: FakeOpenAI, model_config: dict[str, Any]) -> None:
    env = {**os.environ, "NANOBOT_TRAY_HOME": str(home_dir), "OPENAI_API_KEY": "sk-test",
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    history = home_dir / "workspace" / "memory" / "history.jsonl"
    history.parent.mkdir(parents=True)
    history.write_text(json.dumps({"cursor": 1, "timestamp": "2026-05-01T10:00:00+00:00",
                                   "session_key": "cli:direct", "content": "Sam likes tea"}) + "\n")
    fake.add({"content": "[USER] likes tea"},
             {"tool_calls": [{"name": "edit_file", "arguments": {"path": "USER.md", "old_text": "- Name:",
                                                                 "new_text": "- Name:\n- Likes tea"}}]},
             {"content": "done"})
    done = subprocess.run([sys.executable, "-m", "desktop", "dream"], check=False, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "updated USER.md" in done.stdout and "[USER] likes tea" in done.stdout
    assert "- Likes tea" in (home_dir / "workspace" / "USER.md").read_text()


async def test_dream_command_line_failure(home_dir: Path, fake: FakeOpenAI, model_config: dict[str, Any],
                                          memory_keyring: Any, capsys: pytest.CaptureFixture[str]) -> None:
    from desktop.cli.dream_cmd import _main

    history = home_dir / "workspace" / "memory" / "history.jsonl"
    history.parent.mkdir(parents=True)
    history.write_text(json.dumps({"cursor": 1, "timestamp": "2026-05-01T10:00:00+00:00",
                                   "session_key": "cli:direct", "content": "more"}) + "\n")
    fake.add(*[{"status": 500}] * 4)
    assert await _main() == 1
    assert "Dream failed" in capsys.readouterr().err


async def test_a_memory_file_edited_while_dream_runs_keeps_the_edit(core: Core, fake: FakeOpenAI) -> None:
    """The person saved MEMORY.md (the memory window) while Dream waited for the model; Dream then wrote the whole
    file as it had read it, and their line was gone. Now Dream's write is refused until it reads the file again, and
    its change lands on top of theirs."""
    add_history(core, "Atlas uses Postgres 16.")
    memory_file = core.workspace / "memory" / "MEMORY.md"
    read_by_dream = memory_file.read_text()
    fake.add({"content": "[MEMORY] Project Atlas runs on Postgres 16", "delay": 2},
             {"tool_calls": [{"name": "write_file", "arguments": {
                 "path": "memory/MEMORY.md", "content": read_by_dream + "\n## Projects\n- Atlas runs on Postgres 16\n"}}]},
             {"tool_calls": [{"name": "read_file", "arguments": {"path": "memory/MEMORY.md"}}]},
             {"tool_calls": [{"name": "edit_file", "arguments": {
                 "path": "memory/MEMORY.md", "old_text": "Nanobot keeps this up to date.",
                 "new_text": "Nanobot keeps this up to date.\n\n## Projects\n- Atlas runs on Postgres 16"}}]},
             {"content": "Added Atlas."})
    dreaming = asyncio.ensure_future(core.get(Memory).dream.run())
    for _ in range(1000):
        if fake.requests:
            break
        await asyncio.sleep(0.02)
    assert len(fake.requests) == 1  # Dream waits for its analysis
    edit = await save_by_hand(core.get(Memory).git, core.workspace, "memory/MEMORY.md",
                              read_by_dream + "\n- Sam's dog is called Rex\n")
    assert edit.rev is not None
    result = await asyncio.wait_for(dreaming, 60)
    refused = next(m["content"] for m in fake.requests[2]["messages"] if m["role"] == "tool")
    assert "changed since Dream read it" in refused
    kept = memory_file.read_text()
    assert "- Sam's dog is called Rex" in kept and "- Atlas runs on Postgres 16" in kept
    assert result.changed == ["memory/MEMORY.md"]
    assert (await subjects(core))[:2] == ["Dream: update memory/MEMORY.md", "Edit memory/MEMORY.md by hand"]


async def test_a_dream_the_quit_cut_short_records_what_it_had_changed(core: Core, fake: FakeOpenAI) -> None:
    """Quitting while Dream applied its findings left its finished edits in the files with no record of them: the
    Changes tab showed nothing to undo, and the next save folded them into "Edit USER.md by hand". Now they are
    recorded as Dream's, stopped early."""
    def dream_alone(config: Config) -> None:
        config.section(SchedulesConfig).heartbeat_interval = 0

    await core.settings.update(dream_alone)
    clock = ManualClock(datetime(2026, 5, 4, 8, 0, tzinfo=UTC))
    scheduler = core.get(Scheduler)
    scheduler.clock, scheduler.timer = clock, ManualTimer(clock)
    scheduler.start()
    add_history(core, "Sam said their name.")
    fake.add({"content": FINDINGS}, apply_steps()[0], {"content": "still thinking", "delay": 5})
    clock.advance(core.config.section(SchedulesConfig).dream_interval)
    assert scheduler.run_due() == ["dream"]
    for _ in range(1000):
        if len(fake.requests) == 3:
            break
        await asyncio.sleep(0.02)
    assert len(fake.requests) == 3  # USER.md is edited; Dream waits for the model as the app quits
    await core.close()
    assert "- Name: Sam" in (core.workspace / "USER.md").read_text()
    assert (await subjects(core))[0] == "Dream (stopped early): update USER.md"
    assert core.get(Memory).store.dream_cursor() == 0  # the findings are looked at again next time


async def test_a_restore_keeps_a_change_made_outside_the_app_since_undoable(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    """USER.md changed in an editor after Dream's change; restoring to before Dream wrote the old text over it, and
    undoing the restore brought back Dream's version: the person's text was gone for good. Now it is recorded
    first, so undoing the restore gives it back."""
    add_history(core, "Sam")
    fake.add({"content": FINDINGS}, *apply_steps())
    dream = await core.get(Memory).dream.run()
    user_file = core.workspace / "USER.md"
    user_file.write_text(user_file.read_text() + "- Likes: long walks\n")
    reply = await chat.ask(f"/dream-restore {dream.rev[:7]}")
    assert reply.content.startswith("Restored USER.md")
    assert "long walks" not in user_file.read_text()
    restore = (await core.get(Memory).git.log())[0]
    await core.get(Memory).git.restore_before(restore.rev)
    assert "- Likes: long walks" in user_file.read_text()

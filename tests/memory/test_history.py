"""The memory history outside the workspace: an old app-made <workspace>/.git comes over once (browsable and
restorable, the old folder left as it was), a workspace that is the user's own repository is never touched,
and nothing in a workspace's .git can make the app run anything."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from desktop.memory.git_history import GitHistory
from desktop.memory.store import MemoryStore
from desktop.workspace.layout import ensure_workspace
from tests.crowd import empty_files

pytestmark = pytest.mark.asyncio


def git(workspace: Path, *args: str, author: str = "Nanobot <nanobot@localhost>") -> str:
    """The git program, as the older app version ran it (tests only: the app itself never runs git)."""
    name, _, email = author.partition(" <")
    env = {"PATH": os.environ["PATH"], "HOME": str(workspace.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email.rstrip(">"),
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email.rstrip(">")}
    return subprocess.run(["git", "-c", "init.defaultBranch=master", *args], cwd=workspace, env=env, check=True,
                          capture_output=True, text=True).stdout


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ensure_workspace(ws)
    return ws


def history(workspace: Path, tmp_path: Path) -> GitHistory:
    return GitHistory(MemoryStore(workspace), tmp_path / "data" / "memory-history")


@pytest.mark.parametrize("packed", [False, True], ids=["loose objects", "packed"])
async def test_an_old_app_history_comes_over_once_and_stays_restorable(workspace: Path, tmp_path: Path,
                                                                       packed: bool) -> None:
    user = workspace / "USER.md"
    template = user.read_text()
    git(workspace, "init", "-q")
    git(workspace, "add", "USER.md", "SOUL.md", "memory/MEMORY.md")
    git(workspace, "commit", "-qm", "Baseline: memory files before any recorded change")
    user.write_text(template + "- Name: Sam\n")
    git(workspace, "commit", "-qam", "Dream: update USER.md")
    if packed:
        git(workspace, "gc", "-q")
    old = digest(workspace / ".git")

    store = history(workspace, tmp_path)
    log = await store.log()
    assert [c.subject for c in log] == ["Dream: update USER.md", "Baseline: memory files before any recorded change"]
    _, files, diff = await store.show(log[0].short)
    assert files == ["USER.md"] and "+- Name: Sam" in diff
    rev, restored = await store.restore_before(log[0].rev)
    assert restored == ["USER.md"] and user.read_text() == template
    assert [c.subject for c in await store.log()][0] == f"Restore USER.md to before {log[0].short}"
    assert digest(workspace / ".git") == old  # the old folder is left exactly as it was, and no longer used
    assert store.repository.is_dir() and store.repository.is_relative_to(tmp_path / "data")
    assert git(workspace, "log", "--format=%s").splitlines()[0] == "Dream: update USER.md"


async def test_a_workspace_that_is_the_users_own_repository_is_never_touched(workspace: Path, tmp_path: Path) -> None:
    (workspace / "notes.md").write_text("mine\n")
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-qm", "my notes", author="Sam <sam@example.com>")
    (workspace / "USER.md").write_text("- Name: Sam\n")
    git(workspace, "commit", "-qam", "Dream: update USER.md")  # an older app version committed into it
    old = digest(workspace / ".git")

    store = history(workspace, tmp_path)
    assert await store.log() == []
    await store.ensure()  # as the memory window does before a save: the baseline is the "before"
    (workspace / "SOUL.md").write_text("calm\n")
    rev = await store.commit(["SOUL.md"], "Edit SOUL.md by hand")
    assert rev is not None
    assert [c.subject for c in await store.log()] == ["Edit SOUL.md by hand",
                                                      "Baseline: memory files before any recorded change"]
    assert digest(workspace / ".git") == old
    assert git(workspace, "status", "--porcelain").splitlines() == [" M SOUL.md"]  # not committed by the app


async def test_an_old_history_whose_objects_lead_outside_is_not_read(workspace: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git(elsewhere, "init", "-q")
    (elsewhere / "secret.txt").write_text("private\n")
    git(elsewhere, "add", ".")
    git(elsewhere, "commit", "-qm", "private work")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "objects").symlink_to(elsewhere / ".git" / "objects")
    (workspace / ".git" / "HEAD").write_text(git(elsewhere, "rev-parse", "HEAD"))
    store = history(workspace, tmp_path)
    await store.ensure()
    assert [c.subject for c in await store.log()] == ["Baseline: memory files before any recorded change"]


async def test_an_old_history_folder_of_a_hundred_thousand_names_is_not_held_to_import_it(
        workspace: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A sandboxed command can fill .git/objects/<xx> with millions of names. The import listed each folder whole
    (every name in the app's memory) before it counted the files it copies. Now a folder holding more names than
    the import would ever copy ends it, and a new history starts."""
    git(workspace, "init", "-q")
    git(workspace, "add", "USER.md")
    git(workspace, "commit", "-qm", "Baseline: memory files before any recorded change")
    crowd = workspace / ".git" / "objects" / "ab"
    crowd.mkdir(exist_ok=True)
    empty_files(crowd, (f"{i:038x}" for i in range(100_000)))
    store = history(workspace, tmp_path)
    tracemalloc.start()
    try:
        await store.ensure()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 12 MB: the names kept take 3.5; in a process that has not yet loaded the history library (run alone),
    # its first import and the logged traceback's source lines add about 6 (the code before held 25)
    assert peak < 12 * 2**20, f"{peak / 2**20:.0f} MB held"
    assert "more than 20,000 names in .git/objects/ab" in caplog.text
    assert [c.subject for c in await store.log()] == ["Baseline: memory files before any recorded change"]


async def test_nothing_in_a_workspace_git_folder_runs(workspace: Path, tmp_path: Path) -> None:
    """The configuration the older version obeyed: fsmonitor, hooks, filters, a pager, an ssh command."""
    marker = tmp_path / "ran"
    git(workspace, "init", "-q")
    git(workspace, "add", "USER.md")
    git(workspace, "commit", "-qm", "Baseline: memory files before any recorded change")
    run = f"touch {marker}"
    with open(workspace / ".git" / "config", "a") as config:
        config.write(f'[core]\n\tfsmonitor = "{run}"\n\tpager = "{run}"\n\tsshCommand = "{run}"\n'
                     f'\thooksPath = hooks\n[filter "x"]\n\tclean = "{run}"\n\tsmudge = "{run}"\n'
                     f'[diff "x"]\n\ttextconv = "{run}"\n[alias]\n\tlog = "!{run}"\n')
    (workspace / ".gitattributes").write_text("* filter=x diff=x\n")
    for hook in ("pre-commit", "post-commit", "commit-msg", "post-checkout", "reference-transaction"):
        (workspace / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\n{run}\n")
        (workspace / ".git" / "hooks" / hook).chmod(0o755)
        (workspace / "hooks").mkdir(exist_ok=True)
        (workspace / "hooks" / hook).write_text(f"#!/bin/sh\n{run}\n")
        (workspace / "hooks" / hook).chmod(0o755)

    store = history(workspace, tmp_path)
    (workspace / "USER.md").write_text("- Name: Sam\n")
    rev = await store.commit(["USER.md", "SOUL.md"], "Dream: update USER.md")
    assert rev is not None
    await store.log()
    await store.show(rev)
    await store.restore_before(rev)
    assert not marker.exists()

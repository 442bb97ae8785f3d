"""The exec tool with real subprocesses: output, exit codes, refusals, timeouts, a clean environment."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from desktop.tools.base import ToolContext
from desktop.tools.registry import ToolOutcome, ToolRegistry
from desktop.tools.shell import ExecTool

CTX = ToolContext("cli:test")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "history.jsonl").write_text('{"cursor": 1}\n')
    (ws / "sub").mkdir()
    return ws


def registry(workspace: Path, timeout: int = 30, restrict: bool = True) -> ToolRegistry:
    return ToolRegistry([ExecTool(workspace, timeout, restrict=restrict)])


async def run(tools: ToolRegistry, command: str, **args: object) -> ToolOutcome:
    return await tools.run("exec", {"command": command, **args}, CTX)


async def test_output_streams_and_exit_code(workspace: Path) -> None:
    outcome = await run(registry(workspace), "echo out; echo err >&2; exit 3")
    assert outcome.ok
    assert outcome.output == "out\nSTDERR:\nerr\nExit code: 3"
    quiet = await run(registry(workspace), "true")
    assert quiet.output == "(no output)\nExit code: 0"


async def test_runs_in_the_workspace_or_a_folder_inside_it(workspace: Path, tmp_path: Path) -> None:
    tools = registry(workspace)
    assert (await run(tools, "pwd")).output.splitlines()[0] == str(workspace)
    assert (await run(tools, "pwd", working_dir="sub")).output.splitlines()[0] == str(workspace / "sub")
    outside = await run(tools, "pwd", working_dir=str(tmp_path))
    assert not outside.ok and "outside the workspace" in str(outside.output)
    missing = await run(tools, "pwd", working_dir="nope")
    assert not missing.ok and "not an existing folder" in str(missing.output)


async def test_stdin_is_empty_so_commands_never_wait_for_input(workspace: Path) -> None:
    outcome = await run(registry(workspace, timeout=10), "cat; echo done")
    assert outcome.output == "done\nExit code: 0"


async def test_child_environment_has_no_secrets(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
    monkeypatch.setenv("NANOBOT_SOMETHING", "internal")
    outcome = await run(registry(workspace), "env")
    text = str(outcome.output)
    assert "sk-test-must-not-leak" not in text and "OPENAI_API_KEY" not in text and "NANOBOT_" not in text
    names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line and not line.startswith("Exit")}
    assert "PATH" in names and "HOME" in names
    assert names <= {"PATH", "HOME", "LANG", "LC_ALL", "TERM", "USER", "TMPDIR", "SHELL", "PWD", "SHLVL", "_"}


async def test_output_cap_keeps_head_and_tail(workspace: Path) -> None:
    outcome = await run(registry(workspace), "echo FIRST-LINE; head -c 50000 /dev/zero | tr '\\0' x; echo; "
                                             "echo LAST-LINE")
    text = str(outcome.output)
    assert len(text) <= 10_200
    assert text.startswith("FIRST-LINE") and "characters omitted" in text
    assert text.endswith("LAST-LINE\nExit code: 0")


async def test_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    pid_file = workspace / "child.pid"
    started = time.monotonic()
    outcome = await run(registry(workspace, timeout=30), "echo started; sleep 60 & echo $! > child.pid; wait",
                        timeout=1)
    assert time.monotonic() - started < 30  # not held by the 60 s background child
    assert not outcome.ok
    assert "timed out after 1 s" in str(outcome.output) and "started" in str(outcome.output)
    child = int(pid_file.read_text())
    for _ in range(50):  # the kernel reaps the killed sleep asynchronously
        if not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not _alive(child), "the backgrounded sleep survived the timeout"


async def test_cancelled_call_leaves_nothing_running(workspace: Path) -> None:
    """/stop cancels the tool task: the command and its children must die with it."""
    pid_file = workspace / "child.pid"
    task = asyncio.create_task(run(registry(workspace), "sleep 60 & echo $! > child.pid; wait"))
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    child = int(pid_file.read_text())
    for _ in range(50):
        if not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not _alive(child)


async def test_a_background_job_ends_with_the_call(workspace: Path) -> None:
    """`server &` is common: the call returns when the shell exits (not at the 30 s timeout), and the job,
    which would otherwise run on unseen, is stopped with it."""
    outcome = await run(registry(workspace, timeout=30), "sleep 30 & echo $! > bg.pid; echo launched")
    assert outcome.ok and outcome.output == "launched\nExit code: 0"
    child = int((workspace / "bg.pid").read_text())
    for _ in range(50):
        if not _alive(child):
            break
        await asyncio.sleep(0.05)
    assert not _alive(child), "the background job outlived the call"


async def test_timeout_argument_is_bounded(workspace: Path) -> None:
    outcome = await run(registry(workspace), "true", timeout=601)
    assert not outcome.ok and "must be <= 600" in str(outcome.output)


@pytest.mark.parametrize("command, why", [
    ("rm -rf /", "broad path"),
    ("rm -rf ~", "broad path"),
    ("rm -fr $HOME/", "broad path"),
    ("rm -r *", "broad path"),
    ("cd sub && rm -rf ..", "broad path"),
    ("sudo rm -rf --no-preserve-root /", "no-preserve-root"),
    ("bash -c 'rm -rf /home'", "broad path"),
    ("echo $(rm -rf ~)", "broad path"),
    ("mkfs.ext4 /dev/sdb1", "formats"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "device"),
    ("echo x > /dev/sda", "device"),
    ("shutdown -h now", "shutting down"),
    ("sudo reboot", "shutting down"),
    ("systemctl poweroff", "shutting down"),
    (":(){ :|:& };:", "fork bomb"),
    ("bomb() { bomb | bomb & }; bomb", "fork bomb"),
    ("find / -name '*.log' -delete", "find deleting under a broad path"),
    ("find . -type f -delete", "find deleting under a broad path"),
    ("find ~ -exec rm -f {} +", "find deleting under a broad path"),
    ("eval " * 12 + "true", "nested more than"),
    ("echo '{}' >> memory/history.jsonl", "managed by the app"),
    ("rm memory/history.jsonl", "managed by the app"),
    ("mv memory/history.jsonl /tmp/x", "managed by the app"),
    ("sed -i 's/a/b/' memory/history.jsonl", "managed by the app"),
    ("echo 0 > memory/.dream_cursor", "managed by the app"),
])
async def test_dangerous_commands_are_refused(workspace: Path, command: str, why: str) -> None:
    for restrict in (True, False):
        outcome = await run(registry(workspace, restrict=restrict), command)
        assert not outcome.ok, command
        assert "command refused" in str(outcome.output) and why in str(outcome.output), outcome.output
    assert (workspace / "memory" / "history.jsonl").read_text() == '{"cursor": 1}\n'


async def test_a_huge_command_is_refused_at_once(workspace: Path) -> None:
    """1 MB of shell used to take hours of regex backtracking on the event loop, freezing the app."""
    outcome = await asyncio.wait_for(run(registry(workspace), "a" * 1_000_000), 30)
    assert not outcome.ok and "1,000,000 characters, the limit is 65,536" in str(outcome.output)
    bomb_like = await asyncio.wait_for(run(registry(workspace), "x(){ " + "x " * 32_000 + "; }"), 30)
    assert bomb_like.ok and str(bomb_like.output).endswith("Exit code: 0")


async def test_checking_a_long_command_leaves_the_event_loop_free(workspace: Path) -> None:
    """The refusal check of a long command runs in a thread: a ticker on the loop keeps ticking meanwhile."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    # ~60 k characters whose check takes a good fraction of a second; refused at its end, so nothing runs
    command = "echo " + "a " * 30_000 + "; rm -rf /"
    ticking = asyncio.create_task(ticker())
    try:
        outcome = await asyncio.wait_for(run(registry(workspace), command), 60)
    finally:
        ticking.cancel()
    assert not outcome.ok and "broad path" in str(outcome.output)
    assert ticks >= 3, f"the loop ticked only {ticks} times while the command was checked"


@pytest.mark.parametrize("command", ["cat /etc/hostname", "cd /etc && ls", "ls ../", "cat ../../x",
                                     "ls ~", "cd", "cat link/secret.txt", "cp notes.txt /tmp/stolen"])
async def test_restricted_commands_stay_in_the_workspace(workspace: Path, tmp_path: Path, command: str) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    (workspace / "link").symlink_to(tmp_path / "outside")
    outcome = await run(registry(workspace), command)
    assert not outcome.ok and "outside the workspace" in str(outcome.output), outcome.output


async def test_ordinary_commands_still_run_when_restricted(workspace: Path) -> None:
    tools = registry(workspace)
    for command in ["grep -c cursor memory/history.jsonl", "ls -la sub", "echo hi > /dev/null; echo ok",
                    "mkdir -p build/out && rm -rf build", "find . -name '*.pyc' -delete", "/bin/echo 'rm -rf /'", "grep -r '/api/v1' . || true"]:
        outcome = await run(tools, command)
        assert outcome.ok and "Exit code: 0" in str(outcome.output), (command, outcome.output)


async def test_unrestricted_exec_may_read_outside(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("visible")
    outcome = await run(registry(workspace, restrict=False), f"cat {tmp_path / 'outside.txt'}")
    assert outcome.output == "visible\nExit code: 0"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0): treat it as dead
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_a_running_command_reports_its_last_lines_as_it_prints_them(workspace: Path) -> None:
    events: list[object] = []
    ctx = ToolContext("desktop:main", events.append, call_id="call_7")
    script = "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.4; done"
    task = asyncio.ensure_future(registry(workspace).run("exec", {"command": script}, ctx))
    while not any("line 2" in getattr(e, "tail", "") for e in events):  # seen while it still runs
        assert not task.done(), "no progress before the command ended"
        await asyncio.sleep(0.05)
    outcome = await task
    assert outcome.ok and "line 6" in str(outcome.output)
    tails = [e for e in events if type(e).__name__ == "ToolProgress"]
    assert all(e.call_id == "call_7" and e.session_key == "desktop:main" for e in tails)  # type: ignore[attr-defined]
    assert tails[-1].tail.splitlines() == ["line 3", "line 4", "line 5", "line 6"]  # type: ignore[attr-defined]

"""exec's limits through real turns, beyond the sandboxed runaways of tests/security/test_runaways.py:
without the sandbox the same limits hold, the defaults are sane on this machine, other chats go on while
a runaway holds its limit, a changed limit applies to the next command, and for a normal user (not root)
the process limit counts the command's own processes."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.config import Config
from desktop.core import Core
from desktop.kernel.bus import ToolFinished, ToolStarted, TurnFinished
from desktop.tools.limits import Counting, Limits, counting_here
from desktop.tools.sandbox import Sandbox
from desktop.tools.settings import ExecConfig
from desktop.tools.shell import ExecTool
from tests.conftest import Conversation, write_config
from tests.fakeserver import FakeOpenAI
from tests.leftovers import carrying, left_running, marked

SMALL = {"timeout": 5, "max_processes": 64, "max_memory_mb": 256, "max_file_mb": 8}
PROCESSES = "it started more than 64 processes (tools.exec.max_processes)"
MEMORY = "it used more than 256 MB of memory (tools.exec.max_memory_mb)"
FILE = "it wrote a file larger than 8 MB (tools.exec.max_file_mb)"
FORK_LOOP = "python3 -c 'import os\nwhile True:\n try: os.fork()\n except OSError: pass'"  # says nothing


@pytest.fixture
def model_config(model_config: dict[str, Any], home_dir: Path) -> dict[str, Any]:
    """Small limits; exec allowed without asking (unsandboxed it would ask, and nobody is there to answer)."""
    settings = {**model_config, "tools": {"exec": SMALL}, "approvals": {"tools": {"exec": "allow"}}}
    write_config(home_dir, **settings)
    return settings


async def run_in_turn(chat: Conversation, fake: FakeOpenAI, command: str) -> ToolFinished:
    """One turn in which the model runs `command`; the exec call's result."""
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}, {"content": "done"})
    seen = len(chat.of(ToolFinished))
    end = await chat.ask("run it")
    assert isinstance(end, TurnFinished), end
    return chat.of(ToolFinished)[seen]


async def unsandboxed(core: Core, how: str) -> None:
    """exec without the sandbox: the restriction turned off, or bubblewrap missing."""
    if how == "restriction off":
        await core.settings.update(lambda c: setattr(c.tools, "restrict_to_workspace", False))
    else:
        core.tools.register(ExecTool(core.workspace, SMALL["timeout"], restrict=True,
                                     sandbox=Sandbox(core.workspace, program="/nonexistent/bwrap"),
                                     limits=Limits.of(core.config.tools.exec)))
    tool = core.tools.get("exec")
    assert isinstance(tool, ExecTool) and not (await tool.mode()).sandboxed


UNSANDBOXED_CASES = [
    ("fork bomb", "f(){ f & f; }; f", PROCESSES),
    ("fork loop that says nothing", FORK_LOOP, PROCESSES),
    ("memory hog", "python3 -c 'x = bytearray(4 * 10**9)'", MEMORY),
    ("file hog", "head -c 100M /dev/zero > big.bin", FILE),
]


@pytest.mark.parametrize("how", ["restriction off", "bwrap missing"])
@pytest.mark.parametrize("command, limit", [c[1:] for c in UNSANDBOXED_CASES], ids=[c[0] for c in UNSANDBOXED_CASES])
async def test_without_the_sandbox_the_same_limits_stop_runaways(core: Core, chat: Conversation, fake: FakeOpenAI,
                                                                 how: str, command: str, limit: str) -> None:
    await unsandboxed(core, how)
    assert counting_here(None) is not Counting.NONE, "processes are not limited here (root without a pids cgroup)"
    command, token = marked(command)
    finished = await run_in_turn(chat, fake, command)
    assert not finished.ok and finished.result.startswith(f"Error: stopped: {limit}"), finished.result[:300]
    assert await left_running(token) == []


@pytest.mark.parametrize("how", ["restriction off", "bwrap missing"])
async def test_without_the_sandbox_background_jobs_end_with_the_call(core: Core, chat: Conversation,
                                                                     fake: FakeOpenAI, how: str) -> None:
    await unsandboxed(core, how)
    command, token = marked("sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & (sleep 1000 &); echo started")
    finished = await run_in_turn(chat, fake, command)
    assert finished.ok and finished.result == "started\nExit code: 0"
    assert await left_running(token) == []


async def test_as_root_a_job_that_leaves_its_session_ends_with_an_unsandboxed_call(
        core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    """Unsandboxed, a setsid'd job escapes the process group; the call's cgroup still holds it."""
    if counting_here(None) is not Counting.CGROUP:
        pytest.skip("only where a pids cgroup holds each command (as root)")
    await unsandboxed(core, "restriction off")
    command, token = marked("setsid sleep 1000 & echo started")
    finished = await run_in_turn(chat, fake, command)
    assert finished.ok and finished.result.startswith("started\nExit code: 0")
    assert await left_running(token) == []


async def test_the_default_limits_stop_runaways_and_let_ordinary_commands_run(core: Core, chat: Conversation,
                                                                              fake: FakeOpenAI) -> None:
    await core.settings.update(lambda c: setattr(c.tools, "exec", ExecConfig(timeout=30)))
    ordinary = await run_in_turn(chat, fake, "python3 -c 'print(sum(range(10**6)))' && ls / | head -1 && echo ok")
    assert ordinary.ok and ordinary.result.endswith("ok\nExit code: 0"), ordinary.result
    command, token = marked("f(){ f & f; }; f")
    bomb = await run_in_turn(chat, fake, command)
    assert bomb.result.startswith("Error: stopped: it started more than 256 processes"), bomb.result[:300]
    assert await left_running(token) == []
    hog = await run_in_turn(chat, fake, "python3 -c 'x = bytearray(4 * 10**9)'")
    assert hog.result.startswith("Error: stopped: it used more than 2048 MB of memory"), hog.result[:300]


async def test_a_changed_limit_applies_to_the_next_command(core: Core, chat: Conversation, fake: FakeOpenAI) -> None:
    def one_mb(config: Config) -> None:
        config.tools.exec.max_file_mb = 1

    await core.settings.update(one_mb)
    finished = await run_in_turn(chat, fake, "head -c 2M /dev/zero > two.bin")
    assert finished.result.startswith("Error: stopped: it wrote a file larger than 1 MB"), finished.result[:300]
    assert (core.workspace / "two.bin").stat().st_size == 1024 * 1024


async def test_other_chats_go_on_while_a_runaway_holds_its_limit(core: Core, fake: FakeOpenAI) -> None:
    await core.settings.update(lambda c: setattr(c.tools.exec, "timeout", 120))  # the runaway outlasts the test
    first, second = Conversation(core, chat_id="first"), Conversation(core, chat_id="second")
    # A loop that keeps every process it may, retrying now and then (a spinning one would only make the
    # other chat slow on a small machine, which is the processor's share, not the limit, at work).
    command, token = marked("python3 -c 'import os, time\nwhile True:\n try: os.fork()\n "
                            "except OSError: time.sleep(0.2)'")
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]})
    await first.send("run the loop")
    for _ in range(400):  # until the loop holds (nearly) all the processes it may
        if mine(first, ToolStarted) and len(await asyncio.to_thread(carrying, token)) >= 60:
            break
        await asyncio.sleep(0.05)
    assert len(await asyncio.to_thread(carrying, token)) >= 60, "the fork loop never reached its limit"
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo alive"}}]}, {"content": "fine"})
    end = await second.ask("are you there?")
    assert isinstance(end, TurnFinished) and end.content == "fine"
    assert mine(second, ToolFinished)[0].result == "alive\nExit code: 0"
    assert not mine(first, ToolFinished), "the runaway ended before the other chat was answered"
    await first.send("/stop")
    await first.wait_end()
    assert await left_running(token) == []


def mine(chat: Conversation, kind: type) -> list[Any]:
    """`chat`'s own events of `kind` (a Conversation hears every chat's)."""
    return [e for e in chat.of(kind) if e.session_key == chat.key]


# --- a normal user ------------------------------------------------------------------------------------

NOBODY = 65534
_DRIVER = """
import asyncio, json, sys
from pathlib import Path
from desktop.tools.base import ToolContext
from desktop.tools.limits import Limits, counting_here
from desktop.tools.registry import ToolRegistry
from desktop.tools.sandbox import Sandbox
from desktop.tools.shell import ExecTool

async def main():
    workspace, command = Path(sys.argv[1]), sys.argv[2]
    found = {}
    for name, sandbox in (("sandboxed", Sandbox(workspace)), ("unsandboxed", None)):
        tools = ToolRegistry([ExecTool(workspace, 5, restrict=True, sandbox=sandbox, limits=Limits(64, 256, 8))])
        mode = await tools.get("exec").mode()
        outcome = await tools.run("exec", {"command": command}, ToolContext("cli:t"))
        found[name] = {"sandboxed": mode.sandboxed, "counting": counting_here(sandbox and sandbox.program).name,
                       "result": str(outcome.output)}
    print(json.dumps(found))

asyncio.run(main())
"""


@pytest.fixture
def nobodys_workspace() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="nbt-nobody-"))
    folder.chmod(0o755)
    os.chown(folder, NOBODY, NOBODY)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_nobody(*argv: str) -> list[str]:
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]


def interpreter_for_nobody(env: dict[str, str]) -> str | None:
    """A Python that user nobody may run with this checkout importable (a venv under /root is not)."""
    for candidate in (sys.executable, shutil.which("python3") or "", "/usr/bin/python3"):
        if candidate and subprocess.run(as_nobody(candidate, "-c", "import desktop.tools.shell"), env=env,
                                        capture_output=True, timeout=60, check=False).returncode == 0:
            return candidate
    return None


async def test_for_a_normal_user_the_process_limit_counts_the_commands_own_processes(nobodys_workspace: Path) -> None:
    """Everything else runs as the suite's user; as root the kernel never applies RLIMIT_NPROC, so this runs a
    command as user nobody (who has next to no processes of its own) to check the rlimit path: in the
    sandbox's user namespace, and unsandboxed on top of what the user already runs."""
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as user nobody")
    repo = str(Path(__file__).resolve().parents[2])
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(nobodys_workspace), "LANG": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join([repo, sysconfig.get_paths()["purelib"]])}
    python = interpreter_for_nobody(env)
    if python is None:
        pytest.skip("no Python that user nobody may run can import this checkout")
    command, token = marked("f(){ f & f; }; f")
    done = await asyncio.to_thread(subprocess.run, as_nobody(python, "-c", _DRIVER, str(nobodys_workspace), command),
                                   env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["sandboxed"]["sandboxed"], "bwrap does not run for an unprivileged user here"
    assert found["sandboxed"]["counting"] == "NAMESPACE" and found["unsandboxed"]["counting"] == "USER"
    for name in ("sandboxed", "unsandboxed"):
        assert found[name]["result"].startswith(f"Error: stopped: {PROCESSES}"), found[name]["result"][:300]
    assert await left_running(token) == []

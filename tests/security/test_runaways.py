"""Runaways in the sandbox: commands that would take the machine's processes, memory or disk.

Each is a real turn. The refusal list does not know these spellings, so the command runs; its limit stops
it, the result names that limit in words, what it printed (or wrote) so far is kept, and nothing it
started is left running afterwards. Small limits keep each case to seconds."""

from __future__ import annotations

import pytest
import pytest_asyncio

from desktop.config import Config
from desktop.kernel.bus import ToolFinished
from desktop.tools.limits import Counting, counting_here
from desktop.tools.shell import ExecTool
from tests.leftovers import left_running, marked
from tests.security.harness import CONTAINED, STOPPED, Lab

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROCESSES = "it started more than 64 processes (tools.exec.max_processes)"
MEMORY = "it used more than 256 MB of memory (tools.exec.max_memory_mb)"
FILE = "it wrote a file larger than 8 MB (tools.exec.max_file_mb)"
SCRATCH = "it filled /tmp or another of its folders held in memory (each holds up to 256 MB, tools.exec.max_memory_mb)"

# (name, command, the limit named, output printed before it that the result keeps)
CASES: list[tuple[str, str, str, str]] = [
    ("fork bomb the list does not know", "f(){ f & f; }; f", PROCESSES, ""),
    ("fork bomb in bash, which retries", "bash -c 'b(){ b & b; }; b'", PROCESSES, ""),
    ("python fork loop", "python3 -c 'import os\nwhile True: os.fork()'", PROCESSES, ""),
    ("fork loop that ignores failures", "echo forking; python3 -c 'import os\nwhile True:\n try: os.fork()\n "
                                        "except OSError: pass'", PROCESSES, "forking"),
    ("background sleeps in a loop", "while :; do sleep 100 & done", PROCESSES, ""),
    ("memory in one go", "echo before; python3 -c 'x = bytearray(4 * 10**9)'", MEMORY, "before"),
    ("memory bit by bit", "python3 -c 'x = []\nwhile True: x.append(bytearray(10**7))'", MEMORY, ""),
    ("one enormous file", "echo writing; head -c 100M /dev/zero > big.bin", FILE, "writing"),
    ("an enormous file from python", "python3 -c 'open(\"big.py.bin\", \"wb\").write(bytes(10**8))'", FILE, ""),
]


@pytest_asyncio.fixture(loop_scope="module", scope="module", autouse=True)
async def _small_limits(lab: Lab) -> None:
    tool = lab.core.tools.get("exec")
    assert isinstance(tool, ExecTool)
    mode = await tool.mode()
    assert mode.sandboxed, f"this suite needs bwrap ({mode.description})"
    assert counting_here(tool.sandbox.program if tool.sandbox else None) is not Counting.NONE, \
        "processes are not limited here (root without a pids cgroup)"

    def small(config: Config) -> None:
        limits = config.tools.exec
        limits.timeout, limits.max_processes, limits.max_memory_mb, limits.max_file_mb = 5, 64, 256, 8

    await lab.core.settings.update(small)


def last_result(lab: Lab) -> str:
    return str(lab.chat.of(ToolFinished)[-1].result)


@pytest.mark.parametrize("command, limit, kept", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_a_runaway_is_stopped_by_its_limit_and_leaves_nothing(lab: Lab, command: str, limit: str,
                                                                    kept: str) -> None:
    command, token = marked(command)
    assert await lab.attempt("exec", {"command": command}) == STOPPED
    result = last_result(lab)
    assert result.startswith(f"Error: stopped: {limit}"), result[:300]
    assert kept in result.partition("Output")[2]
    assert await left_running(token) == []


async def test_what_a_runaway_wrote_is_kept_and_a_command_that_goes_on_says_what_was_cut_short(lab: Lab) -> None:
    command, _ = marked("echo first line; head -c 100M /dev/zero > kept.bin; echo after")
    assert await lab.attempt("exec", {"command": command}) == CONTAINED  # the shell went on and succeeded
    result = last_result(lab)
    assert result.startswith("first line\nafter\nSTDERR:\nFile size limit exceeded\nExit code: 0")
    assert result.endswith(f"\n(a limit stopped part of it: {FILE})")
    assert (lab.workspace / "kept.bin").stat().st_size == 8 * 1024 * 1024


async def test_jobs_that_outlive_the_shell_end_with_the_call(lab: Lab) -> None:
    command, token = marked("sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 1000 & "
                            "(sleep 1000 &); echo started")
    assert await lab.attempt("exec", {"command": command}) == CONTAINED
    assert last_result(lab).startswith("started")
    assert await left_running(token) == []


# Each under the file limit, together past the memory limit: every private folder of the sandbox (/tmp, /var/tmp,
# the hidden home...) is held in memory, which nothing but the folder's own size bounds.
FILL = "i=0; while [ $i -lt 40 ]; do head -c 8M /dev/zero > {folder}/f$i || exit 1; i=$((i+1)); done; echo all-written"


@pytest.mark.parametrize("folder", ["/tmp", "/var/tmp", "~", "$(printf /de)v/shm"],  # built: /dev is refused by name
                         ids=["/tmp", "/var/tmp", "the hidden home", "/dev/shm"])
async def test_a_private_folder_held_in_memory_holds_no_more_than_the_memory_limit(lab: Lab, folder: str) -> None:
    """Before, each could grow to half of the computer's memory (a tmpfs's default), several of them past all
    of it; and the out-of-memory killer cannot free a folder by killing its writer, so it killed other programs,
    the app among them. Now each holds at most tools.exec.max_memory_mb and a write past it fails."""
    command, token = marked(FILL.replace("{folder}", folder))
    outcome = await lab.attempt("exec", {"command": command})
    result = last_result(lab)
    assert outcome == STOPPED, result[:300]
    assert "No space left on device" in result and "all-written" not in result, result[:300]
    assert result.startswith(f"Error: stopped: {SCRATCH}"), result[:300]
    assert await left_running(token) == []


async def test_dev_is_read_only_so_it_is_no_folder_held_in_memory_without_a_size(lab: Lab) -> None:
    """bwrap's /dev is a tmpfs too, which its own option cannot size: a file written there took memory as /tmp did."""
    assert await lab.attempt("exec", {"command": "D=$(printf /de)v; head -c 1M /dev/zero > $D/planted; ls $D/planted"}) == CONTAINED
    result = last_result(lab)
    assert "Read-only file system" in result and "No such file" in result, result[:300]

"""exec inside the bubblewrap sandbox, with real bwrap: what a command can see, write and leave behind."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from desktop.config import Config
from desktop.kernel.paths import home
from desktop.tools.base import ToolContext
from desktop.tools.registry import ToolOutcome, ToolRegistry
from desktop.tools.sandbox import Sandbox, exec_sandbox
from desktop.tools.shell import ExecTool
from desktop.workspace.layout import APP_MANAGED_FILES, ensure_workspace

CTX = ToolContext("cli:test")


class Layout:
    """An app home (config, sessions), its workspace, and a user home with a canary and a skill folder."""

    def __init__(self, tmp_path: Path) -> None:
        self.app = tmp_path / "home"
        self.workspace = self.app / "workspace"
        ensure_workspace(self.workspace)
        (self.app / "config.yaml").write_text("model: openai/test\n")
        (self.app / "data" / "sessions").mkdir(parents=True)
        (self.app / "data" / "sessions" / "cli_other.jsonl").write_text('{"secret": "other chat"}\n')
        self.user = tmp_path / "user"
        (self.user / ".ssh").mkdir(parents=True)
        (self.user / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
        self.skills = self.user / ".agents" / "skills"
        (self.skills / "demo").mkdir(parents=True)
        (self.skills / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\nbody\n")
        (self.workspace / "memory" / "history.jsonl").write_text('{"cursor": 1}\n')

    def tools(self, config: Config | None = None, timeout: int = 30) -> ToolRegistry:
        config = config or Config()
        protected = [self.workspace / name for name in APP_MANAGED_FILES]
        sandbox = exec_sandbox(config, home(), self.workspace, [self.skills], protected)
        return ToolRegistry([ExecTool(self.workspace, timeout, restrict=True, run_extras=(self.skills,),
                                      sandbox=sandbox)])


@pytest.fixture
def layout(home_dir: Path, tmp_path: Path) -> Layout:
    return Layout(tmp_path)


async def run(tools: ToolRegistry, command: str, **args: object) -> ToolOutcome:
    return await tools.run("exec", {"command": command, **args}, CTX)


async def test_bwrap_works_here_and_the_mode_says_so(layout: Layout) -> None:
    tool = layout.tools().get("exec")
    assert isinstance(tool, ExecTool)
    mode = await tool.mode()
    assert mode.sandboxed and "bubblewrap" in mode.description


async def test_a_missing_bwrap_is_named_and_commands_fall_back_to_refusals(layout: Layout) -> None:
    sandbox = Sandbox(layout.workspace, program="/nonexistent/bwrap")
    assert "bubblewrap (bwrap) is not installed" in (await sandbox.mode()).description
    assert "not installed" in sandbox.mode_now().description
    tools = ToolRegistry([ExecTool(layout.workspace, 30, restrict=True, sandbox=sandbox)])
    assert (await run(tools, "echo plain")).output == "plain\nExit code: 0"
    refused = await run(tools, "rm -rf ~")
    assert not refused.ok and "command refused" in str(refused.output)


async def test_a_bwrap_not_found_once_is_used_as_soon_as_it_is_found(layout: Layout,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Installed while the app runs (or PATH mended): the next command is sandboxed. "Not installed" was kept
    for the rest of the run, so every later command ran with the refusals alone."""
    tool = layout.tools().get("exec")
    assert isinstance(tool, ExecTool)
    with monkeypatch.context() as m:
        m.setenv("PATH", str(layout.user))  # a PATH with no bwrap on it
        assert not (await tool.mode()).sandboxed
    assert (await tool.mode()).sandboxed
    assert (await run(layout.tools(), "cat ~/.ssh/id_rsa")).output != "PRIVATE KEY\nExit code: 0"


async def test_a_command_stopped_while_bwrap_is_probed_leaves_no_probe_running(layout: Layout, tmp_path: Path) -> None:
    """The first command of a run probes bwrap; /stop then must not leave the probe behind."""
    started = tmp_path / "probe.pid"
    slow = tmp_path / "slow-bwrap"
    slow.write_text(f"#!/bin/sh\necho $$ > {started}\nexec sleep 30\n")
    slow.chmod(0o755)
    probing = asyncio.ensure_future(Sandbox(layout.workspace, program=str(slow)).mode())
    for _ in range(200):
        if started.exists() and started.read_text().strip():
            break
        await asyncio.sleep(0.05)
    pid = int(started.read_text())
    probing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await probing
    for _ in range(200):
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().split(") ")[-1].startswith("Z"):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the stopped probe is still running")


async def test_a_stop_while_bwrap_is_still_starting_returns_at_once_and_leaves_nothing(layout: Layout,
                                                                                      tmp_path: Path) -> None:
    """Stopped at every moment of the probe's first 40 ms: a stop that came while bwrap was being started waited
    for the probe to answer (a busy machine's bwrap took the whole ten seconds of it, and so did the Stop)."""
    pids = tmp_path / "probe.pids"
    slow = tmp_path / "slow-bwrap"
    slow.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 30\n")
    slow.chmod(0o755)
    for step in range(40):
        probing = asyncio.ensure_future(Sandbox(layout.workspace, program=str(slow)).mode())
        await asyncio.sleep(step / 1000)
        probing.cancel()
        async with asyncio.timeout(3):  # the probe's own bound is 10 s
            with pytest.raises(asyncio.CancelledError):
                await probing
    await asyncio.sleep(0.2)  # a process killed as it started has been reaped by now
    alive = [pid for pid in pids.read_text().split() if Path(f"/proc/{pid}/stat").exists()
             and not Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")] if pids.exists() else []
    assert not alive, f"probes left running: {alive}"


async def test_run_time_paths_cannot_reach_home_config_or_sessions(layout: Layout) -> None:
    """Paths built at run time get past the refusals; the sandbox hides what they point at."""
    tools = layout.tools()
    for target in (layout.user / ".ssh" / "id_rsa", layout.app / "config.yaml",
                   layout.app / "data" / "sessions" / "cli_other.jsonl"):
        built = str(target).replace("/", "$(printf /)")
        outcome = await run(tools, f'cat "{built}"; python3 -c \'import pathlib; print(pathlib.Path("{target}").exists())\'')
        text = str(outcome.output)
        assert "No such file" in text and "False" in text and "PRIVATE KEY" not in text, text
        assert "secret" not in text and "openai/test" not in text


async def test_deletes_outside_the_workspace_change_nothing(layout: Layout) -> None:
    tools = layout.tools()
    script = (f"import shutil; shutil.rmtree('{layout.user}', ignore_errors=True); "
              f"shutil.rmtree('{layout.skills}', ignore_errors=True); print('tried')")
    outcome = await run(tools, f'python3 -c "{script}"; D=$(dirname "$PWD"); rm -rf "$D/config.yaml" "$D/data"')
    assert "tried" in str(outcome.output)
    assert (layout.user / ".ssh" / "id_rsa").read_text() == "PRIVATE KEY"
    assert (layout.skills / "demo" / "SKILL.md").exists()
    assert (layout.app / "config.yaml").exists() and (layout.app / "data" / "sessions").is_dir()


async def test_the_workspace_is_writable_and_skills_are_readable_but_not_writable(layout: Layout) -> None:
    tools = layout.tools()
    outcome = await run(tools, f"echo made > made.txt && cat {layout.skills}/demo/SKILL.md | head -2 && "
                               f"echo x > {layout.skills}/demo/evil.txt")
    assert (layout.workspace / "made.txt").read_text() == "made\n"
    assert "name: demo" in str(outcome.output) and "Read-only file system" in str(outcome.output)
    assert not (layout.skills / "demo" / "evil.txt").exists()


async def test_memory_files_managed_by_the_app_stay_read_only(layout: Layout) -> None:
    tools = layout.tools()
    (layout.workspace / "memory" / ".dream_cursor").unlink(missing_ok=True)
    forged = ('H=memory/hist; H="${H}ory.jsonl"; echo \'{"cursor": 99}\' >> $H; '
              "C=memory/.dream; echo 5 > ${C}_cursor; mv memory mem2; mkdir -p mem2; echo done")
    outcome = await run(tools, forged)
    assert "done" in str(outcome.output)
    assert (layout.workspace / "memory" / "history.jsonl").read_text() == '{"cursor": 1}\n'
    assert (layout.workspace / "memory" / ".dream_cursor").read_text() == ""  # made empty to be mounted
    assert (layout.workspace / "memory" / "MEMORY.md").exists()
    edited = await run(tools, "echo note >> memory/MEMORY.md && echo ok")
    assert "ok" in str(edited.output)


async def test_tmp_is_private_and_the_app_is_not_in_proc(layout: Layout, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-planted-in-the-app")
    tools = layout.tools()
    outcome = await run(tools, "echo private > /tmp/note; ls /proc | grep -c '^[0-9]'; "
                               "cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'; ls /run /home")
    text = str(outcome.output)
    assert "sk-planted" not in text
    processes = int(text.splitlines()[0])
    assert processes < 10, f"{processes} processes visible: the pid namespace is not private"
    assert not Path("/tmp/note").exists()


async def test_background_processes_die_with_the_call(layout: Layout) -> None:
    """Even a process that left the session (setsid) cannot outlive its tool call."""
    marker = f"{os.getpid()}.77"
    outcome = await run(layout.tools(), f"setsid sleep {marker} & nohup sleep {marker} >/dev/null 2>&1 & echo ok")
    assert str(outcome.output).startswith("ok")
    for _ in range(50):
        if not _running("sleep", marker):
            break
        await asyncio.sleep(0.05)
    assert not _running("sleep", marker)


async def test_a_timeout_kills_the_sandboxed_tree(layout: Layout) -> None:
    marker = f"{os.getpid()}.78"
    outcome = await run(layout.tools(), f"setsid sleep {marker} & sleep {marker}", timeout=1)
    assert not outcome.ok and "timed out" in str(outcome.output)
    for _ in range(50):
        if not _running("sleep", marker):
            break
        await asyncio.sleep(0.05)
    assert not _running("sleep", marker)


async def test_a_probe_cut_short_by_closing_the_app_leaves_no_process(tmp_path: Path) -> None:
    """The first command's probe of bwrap, stopped with its turn or by Quit, used to leave the probe running."""
    marker = f"{os.getpid()}.79"
    slow = tmp_path / "slow-bwrap"
    slow.write_text(f"#!/bin/sh\nexec sleep {marker}\n")
    slow.chmod(0o755)
    (tmp_path / "workspace").mkdir()
    probing = asyncio.ensure_future(Sandbox(tmp_path / "workspace", program=str(slow)).mode())
    for _ in range(100):
        if _running("sleep", marker):
            break
        await asyncio.sleep(0.05)
    probing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await probing
    for _ in range(50):
        if not _running("sleep", marker):
            break
        await asyncio.sleep(0.05)
    assert not _running("sleep", marker)


async def test_a_probe_too_slow_to_answer_is_asked_again_not_kept_for_the_run(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """One busy moment used to run that command, and every later one of the run, without the sandbox (seen in a
    loaded test run: commands reached services on this computer's loopback). Now that command is not run, and
    the next one probes again."""
    monkeypatch.setattr("desktop.tools.sandbox._PROBE_TIMEOUT", 1.0)
    once = tmp_path / "answered-slowly-once"
    bwrap = tmp_path / "bwrap-slow-at-first"
    bwrap.write_text(f"#!/bin/sh\n[ -e {once} ] || {{ touch {once}; exec sleep 30; }}\nexec bwrap \"$@\"\n")
    bwrap.chmod(0o755)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    sandbox = Sandbox(workspace, program=str(bwrap))
    tools = ToolRegistry([ExecTool(workspace, 30, restrict=True, sandbox=sandbox)])
    first = await run(tools, "echo ran")
    assert not first.ok and "sandbox did not start in time" in str(first.output) and "ran\n" not in str(first.output)
    assert (await sandbox.mode()).sandboxed
    assert str((await run(tools, "echo ran")).output).startswith("ran")


def _running(name: str, marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[:2] == [name.encode(), marker.encode()]:
                return True
    return False


@pytest.mark.parametrize("protected", ["USER.md", "memory/history.jsonl"])
async def test_a_protected_file_turned_into_a_link_never_mounts_what_it_points_at(layout: Layout,
                                                                                  protected: str) -> None:
    """bwrap follows a link in a bind's source: a memory file swapped for a link to a hidden file (while no
    sandbox held it, say by an approved unsandboxed command) must not put that file into the next one."""
    tools = layout.tools()
    target = layout.workspace / protected
    target.unlink()
    target.symlink_to(layout.user / ".ssh" / "id_rsa")
    outcome = await run(tools, f"cat {protected}; echo read")
    assert "read" in str(outcome.output) and "PRIVATE KEY" not in str(outcome.output)
    dangling = layout.workspace / "SOUL.md"
    dangling.unlink()
    dangling.symlink_to(layout.user / "made-by-the-app")
    await run(tools, "true")
    assert not (layout.user / "made-by-the-app").exists()  # not created through the link either

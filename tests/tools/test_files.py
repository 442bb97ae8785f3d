"""File tools through the registry (validation included) on a real workspace folder."""

from __future__ import annotations

import asyncio
import base64
import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest

from desktop.core import Core
from desktop.kernel.bus import Event, OutboundKind, OutboundMessage, TurnFinished
from desktop.tools.base import ToolContext
from desktop.tools.filesystem import (
    READ_CHAR_LIMIT,
    EditFileTool,
    GlobTool,
    GrepTool,
    ListDirTool,
    ReadFileTool,
    WriteFileTool,
)
from desktop.tools.message import MessageTool
from desktop.tools.path_guard import PathGuard
from desktop.tools.registry import ToolOutcome, ToolRegistry
from tests.conftest import Conversation, tool_results
from tests.fakeserver import FakeOpenAI

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "history.jsonl").write_text('{"cursor": 1}\n')
    (ws / "notes").mkdir()
    (ws / "notes" / "a.md").write_text("alpha\nbeta\ngamma\n")
    return ws


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    extra = tmp_path / "bundled-skills"
    (extra / "weather").mkdir(parents=True)
    (extra / "weather" / "SKILL.md").write_text("# Weather skill\n")
    return extra


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("top secret\n")
    return secret


@pytest.fixture
def tools(workspace: Path, skills: Path) -> ToolRegistry:
    guard = PathGuard(workspace, True, read_only_extras=[skills],
                      protected=[workspace / "memory" / "history.jsonl", workspace / "memory" / ".dream_cursor"])
    return ToolRegistry([ReadFileTool(guard), WriteFileTool(guard), EditFileTool(guard), ListDirTool(guard),
                         GlobTool(guard), GrepTool(guard), MessageTool()])


CTX = ToolContext("cli:test")


async def run(tools: ToolRegistry, name: str, **args: object) -> ToolOutcome:
    return await tools.run(name, args, CTX)


async def ok(tools: ToolRegistry, name: str, **args: object) -> str:
    outcome = await run(tools, name, **args)
    assert outcome.ok, outcome.output
    assert isinstance(outcome.output, str)
    return outcome.output


async def refused(tools: ToolRegistry, name: str, **args: object) -> str:
    outcome = await run(tools, name, **args)
    assert not outcome.ok, outcome.output
    assert isinstance(outcome.output, str) and outcome.output.startswith("Error: ")
    return outcome.output


# --- read_file -----------------------------------------------------------------------------------------

async def test_read_file_numbers_lines_and_pages(tools: ToolRegistry) -> None:
    text = await ok(tools, "read_file", path="notes/a.md")
    assert text.splitlines() == ["     1\talpha", "     2\tbeta", "     3\tgamma"]
    page = await ok(tools, "read_file", path="notes/a.md", offset="2", limit=1)  # "2" is cast to 2
    assert page.splitlines()[0] == "     2\tbeta"
    assert "Showing lines 2-2 of 3" in page and "offset=3" in page
    assert "past the end" in await refused(tools, "read_file", path="notes/a.md", offset=10)


async def test_read_file_caps_long_files_and_says_how_to_continue(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i} " + "x" * 90 + "\n" for i in range(1, 2001)))
    text = await ok(tools, "read_file", path="big.txt")
    assert len(text) < READ_CHAR_LIMIT + 300
    last = int(text.split("Showing lines 1-")[1].split(" ")[0])
    assert f"Use offset={last + 1}" in text and "of 2000" in text
    following = await ok(tools, "read_file", path="big.txt", offset=last + 1)
    assert following.startswith(f"{last + 1:>6}\tline {last + 1} ")


async def test_read_file_image_binary_and_missing(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / "dot.png").write_bytes(PNG_1PX)
    outcome = await run(tools, "read_file", path="dot.png")
    assert outcome.ok and isinstance(outcome.output, list)
    assert outcome.output[0]["type"] == "text"
    assert outcome.output[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG_1PX).decode()
    (workspace / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 100)
    assert "binary" in await refused(tools, "read_file", path="blob.bin")
    assert "does not exist" in await refused(tools, "read_file", path="nope.txt")
    assert "folder" in await refused(tools, "read_file", path="notes")


async def test_read_only_extras_are_readable_not_writable(tools: ToolRegistry, skills: Path) -> None:
    skill = skills / "weather" / "SKILL.md"
    assert "Weather skill" in await ok(tools, "read_file", path=str(skill))
    assert "SKILL.md" in await ok(tools, "glob", pattern="**/*.md", path=str(skills))
    assert "outside the workspace" in await refused(tools, "write_file", path=str(skill), content="x")
    assert "outside the workspace" in await refused(tools, "edit_file", path=str(skill),
                                                    old_text="Weather", new_text="Rain")
    assert skill.read_text() == "# Weather skill\n"


# --- workspace escapes -----------------------------------------------------------------------------------

async def test_escapes_are_refused_for_every_file_tool(tools: ToolRegistry, workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside.parent)
    (workspace / "secret-link.txt").symlink_to(outside)
    for path in ["../outside/secret.txt", str(outside), "link/secret.txt", "secret-link.txt", "~/.bashrc"]:
        assert "outside the workspace" in await refused(tools, "read_file", path=path)
        assert "outside the workspace" in await refused(tools, "write_file", path=path, content="pwned")
        assert "outside the workspace" in await refused(tools, "edit_file", path=path,
                                                        old_text="top", new_text="pwned")
    assert "outside the workspace" in await refused(tools, "list_dir", path="..")
    assert "outside the workspace" in await refused(tools, "grep", pattern="secret", path="link")
    assert outside.read_text() == "top secret\n"


async def test_search_tools_do_not_follow_links_out(tools: ToolRegistry, workspace: Path, outside: Path) -> None:
    (workspace / "link").symlink_to(outside.parent)
    (workspace / "secret-link.txt").symlink_to(outside)
    assert "secret" not in await ok(tools, "glob", pattern="**/*")
    assert "secret" not in await ok(tools, "glob", pattern="link/*")
    assert "No matches" in await ok(tools, "grep", pattern="top secret")
    assert "'..'" in await refused(tools, "glob", pattern="../outside/*")
    assert "relative" in await refused(tools, "glob", pattern=str(outside.parent) + "/*")


# --- write_file / edit_file ------------------------------------------------------------------------------

async def test_write_file_creates_folders_and_keeps_permissions(tools: ToolRegistry, workspace: Path) -> None:
    assert "Created" in await ok(tools, "write_file", path="deep/er/new.txt", content="hello\n")
    assert (workspace / "deep" / "er" / "new.txt").read_text() == "hello\n"
    script = workspace / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o755)
    assert "Overwrote" in await ok(tools, "write_file", path="run.sh", content="echo 2\n")
    assert script.read_text() == "echo 2\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert not [p for p in workspace.rglob("*.tmp")]


async def test_protected_memory_files_cannot_be_written(tools: ToolRegistry, workspace: Path) -> None:
    history = workspace / "memory" / "history.jsonl"
    assert "managed by the app" in await refused(tools, "write_file", path="memory/history.jsonl", content="")
    assert "managed by the app" in await refused(tools, "edit_file", path="memory/history.jsonl",
                                                 old_text="1", new_text="2")
    assert history.read_text() == '{"cursor": 1}\n'
    assert "cursor" in await ok(tools, "read_file", path="memory/history.jsonl")


async def test_edit_file_requires_a_unique_match(tools: ToolRegistry, workspace: Path) -> None:
    file = workspace / "code.py"
    file.write_text("x = 1\ny = 1\nprint(x)\n")
    error = await refused(tools, "edit_file", path="code.py", old_text=" = 1", new_text=" = 2")
    assert "occurs 2 times" in error and "lines 1, 2" in error and "replace_all" in error
    assert file.read_text() == "x = 1\ny = 1\nprint(x)\n"
    assert "replaced 1 occurrence" in await ok(tools, "edit_file", path="code.py",
                                               old_text="y = 1", new_text="y = 3")
    await ok(tools, "edit_file", path="code.py", old_text="print(x)\n", new_text="print(x)\nprint(x)\n")
    assert file.read_text() == "x = 1\ny = 3\nprint(x)\nprint(x)\n"
    assert "replaced 2 occurrences" in await ok(tools, "edit_file", path="code.py", old_text="print(x)",
                                                new_text="print(y)", replace_all="true")
    assert file.read_text() == "x = 1\ny = 3\nprint(y)\nprint(y)\n"


async def test_edit_file_points_at_the_nearest_text_when_missing(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / "code.py").write_text("def f():\n    return compute(1, 2)\n\nprint(f())\n")
    error = await refused(tools, "edit_file", path="code.py", old_text="return compute(1,2)", new_text="x")
    assert "not found" in error and "line 2" in error and "return compute(1, 2)" in error


async def test_edit_file_keeps_windows_line_endings(tools: ToolRegistry, workspace: Path) -> None:
    file = workspace / "win.txt"
    file.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await ok(tools, "edit_file", path="win.txt", old_text="one\ntwo", new_text="uno\ndos")
    assert file.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_bad_arguments_are_tool_errors(tools: ToolRegistry) -> None:
    assert "missing required content" in await refused(tools, "write_file", path="a.txt")
    assert "unexpected mode" in await refused(tools, "write_file", path="a.txt", content="", mode="w")
    assert "must not be empty" in await refused(tools, "edit_file", path="notes/a.md", old_text="", new_text="x")


# --- list_dir / glob / grep ------------------------------------------------------------------------------

async def test_list_dir_marks_folders_and_sizes(tools: ToolRegistry, workspace: Path) -> None:
    listing = (await ok(tools, "list_dir")).splitlines()
    assert listing[:2] == ["memory/", "notes/"]
    assert "a.md  (17 B)" in await ok(tools, "list_dir", path="notes")
    for i in range(250):
        (workspace / "many" / f"f{i:03}").parent.mkdir(exist_ok=True)
        (workspace / "many" / f"f{i:03}").write_text("")
    many = await ok(tools, "list_dir", path="many")
    assert "and 50 more entries" in many and "f199" in many and "f200" not in many


async def test_list_dir_of_a_folder_too_large_to_count_stops_in_its_time(tools: ToolRegistry, workspace: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Counting a folder of millions of names ran on in a thread no Stop can end. Here 3,000 names and a bound
    shortened to a moment stand in for them: the answer says it stopped counting, and how far it got."""
    (workspace / "many").mkdir()
    for name in range(3000):
        (workspace / "many" / f"{name}.txt").write_text("")
    with monkeypatch.context() as short:
        short.setattr("desktop.tools.filesystem.LIST_SECONDS", 0.0)
        said = await ok(tools, "list_dir", path="many")
    assert re.fullmatch(r"(.*\n)*\.\.\. stopped counting after 0 s at \d+ entries \(the folder holds more\): "
                        r"these are the first \d+ by name of those counted", said), said
    assert (await ok(tools, "list_dir", path="many")).endswith("(3000 in all; showing the first 200 by name)")


async def test_a_glob_over_one_folder_of_many_names_stops_in_its_time(tools: ToolRegistry, workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk looked at the time once per folder, so one folder of millions of names (a loop in one sandboxed
    command) was matched and checked name by name to the end: 100,000 took 48 s, in a thread no Stop can end.
    Here 3,000 names and a bound shortened to a moment stand in for them."""
    (workspace / "many").mkdir()
    for name in range(3000):
        (workspace / "many" / f"{name}.txt").write_text("")
    with monkeypatch.context() as short:
        short.setattr("desktop.tools.filesystem.GLOB_SECONDS", 0.05)
        said = await refused(tools, "glob", pattern="many/*")
    assert re.match(r"Error: stopped after 0 s: the folder holds too much to search this way; narrow the path or "
                    r"the pattern \(\d+ found so far\)", said), said
    listed = (await ok(tools, "glob", pattern="many/*")).splitlines()
    assert listed[0] == "many/0.txt" and listed[-1] == "... and 2800 more (showing 200 of 3000)"


async def test_glob_sorts_and_skips_git(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / ".git" / "objects").mkdir(parents=True)
    (workspace / ".git" / "objects" / "x.md").write_text("")
    (workspace / "notes" / "sub").mkdir()
    (workspace / "notes" / "sub" / "c.md").write_text("")
    (workspace / "notes" / "b.md").write_text("")
    assert (await ok(tools, "glob", pattern="**/*.md")).splitlines() == ["notes/a.md", "notes/b.md",
                                                                         "notes/sub/c.md"]
    assert (await ok(tools, "glob", pattern="*.md", path="notes")).splitlines() == ["notes/a.md", "notes/b.md"]
    assert "No files match" in await ok(tools, "glob", pattern="*.xyz")


async def test_grep_finds_lines_skips_binary_and_git(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / "notes" / "b.txt").write_text("Beta version\nnothing\n")
    (workspace / "blob.bin").write_bytes(b"beta\x00beta")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("beta\n")
    assert (await ok(tools, "grep", pattern="beta")).splitlines() == ["notes/a.md:2: beta"]
    assert (await ok(tools, "grep", pattern="beta", ignore_case=True)).splitlines() == [
        "notes/a.md:2: beta", "notes/b.txt:1: Beta version"]
    assert (await ok(tools, "grep", pattern="^b", ignore_case=True, glob="*.txt")).splitlines() == [
        "notes/b.txt:1: Beta version"]
    assert "notes/a.md:1: alpha" in await ok(tools, "grep", pattern="a.p", path="notes/a.md")
    assert "No matches" in await ok(tools, "grep", pattern="a.p", path="notes/a.md", fixed_strings=True)
    assert "invalid regular expression" in await refused(tools, "grep", pattern="(unclosed")


async def test_grep_caps_results(tools: ToolRegistry, workspace: Path) -> None:
    (workspace / "log.txt").write_text("hit\n" * 500)
    lines = (await ok(tools, "grep", pattern="hit")).splitlines()
    assert len(lines) == 201 and "stopped at 200 matches" in lines[-1]


async def test_a_grep_over_a_folder_too_large_to_walk_stops_in_its_time(tools: ToolRegistry, workspace: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk listed every file before searching any, with no bound: millions of files ran on in a thread no
    Stop can end. Here 3,000 files and a bound shortened to a moment stand in for them."""
    for folder in range(30):
        (workspace / "many" / f"f{folder}").mkdir(parents=True)
        for name in range(100):
            (workspace / "many" / f"f{folder}" / f"{name}.txt").write_text("nothing\n")
    with monkeypatch.context() as short:
        short.setattr("desktop.tools.filesystem.GREP_WALK_SECONDS", 0.001)
        said = await refused(tools, "grep", pattern="needle")
    assert "stopped after 0 s: this folder holds too much to search this way; narrow the path or glob" in said
    assert "notes/a.md:2: beta" in await ok(tools, "grep", pattern="beta")  # in its usual time: found


async def test_a_grep_over_one_folder_of_many_files_stops_in_its_time(tools: ToolRegistry, workspace: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk looked at the time once per folder, so every file of one folder of millions (a loop in one
    sandboxed command) was opened and searched to the end. Here 3,000 files and a bound shortened to a moment."""
    (workspace / "many").mkdir()
    for name in range(3000):
        (workspace / "many" / f"{name}.txt").write_text("nothing\n")
    with monkeypatch.context() as short:
        short.setattr("desktop.tools.filesystem.GREP_WALK_SECONDS", 0.05)
        said = await refused(tools, "grep", pattern="needle", path="many")
    assert "stopped after 0 s: this folder holds too much to search this way; narrow the path or glob" in said
    assert "No matches" in await ok(tools, "grep", pattern="needle", path="many")  # in its usual time: searched


def nested_chain(workspace: Path, depth: int) -> None:
    """Folders `depth` deep (as `mkdir d && cd d` over and over in a sandboxed command), a file at the bottom."""
    fd = os.open(workspace, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("found.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)


@pytest.mark.parametrize("tool, args", [("glob", {"pattern": "**/found.txt"}), ("grep", {"pattern": "needle"})])
async def test_folders_nested_past_pythons_limit_are_named_as_such(tools: ToolRegistry, workspace: Path,
                                                                   tool: str, args: dict[str, str]) -> None:
    """grep said 'grep failed: RecursionError: maximum recursion depth exceeded'; both say what to do instead."""
    nested_chain(workspace, 1200)
    try:
        assert "nested too deep to search; pass a folder inside as `path`" in await refused(tools, tool, **args)
    finally:  # rm goes down without recursing; pytest's own clean-up of old temporary folders would not get far
        subprocess.run(["rm", "-rf", str(workspace / "d")], check=True, timeout=60)


# --- message ---------------------------------------------------------------------------------------------

async def test_message_is_published_to_the_current_session(tools: ToolRegistry) -> None:
    events: list[Event] = []
    ctx = ToolContext("desktop:main", events.append)
    outcome = await tools.run("message", {"content": "Halfway there"}, ctx)
    assert outcome.output == "Message sent."
    assert events == [OutboundMessage("desktop:main", "Halfway there", OutboundKind.MESSAGE)]
    await tools.run("message", {"content": "hi", "session_key": "cli:other"}, ctx)
    assert events[-1] == OutboundMessage("cli:other", "hi", OutboundKind.MESSAGE)


def test_new_files_get_normal_permissions(workspace: Path) -> None:
    """mkstemp alone would make every created file private (0600); created files follow the umask."""
    from desktop.tools.filesystem import write_text_keeping_mode
    target = workspace / "fresh.txt"
    write_text_keeping_mode(target, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


@pytest.mark.timeout(20)
def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(workspace: Path, outside: Path) -> None:
    """A command running beside the tool swaps a folder for a link between the guard's check and the open:
    the open itself stays inside (the guard's answer is taken, then the swap happens, then the tool opens)."""
    guard = PathGuard(workspace, True)
    read, write, edit = ReadFileTool(guard), WriteFileTool(guard), EditFileTool(guard)
    checked = guard.resolve("notes/a.md")
    (workspace / "notes").rename(workspace / "notes.old")
    (workspace / "notes").symlink_to(outside.parent)
    (outside.parent / "a.md").write_text("outside, not to be read\n")
    for attempt in (lambda: read._read(checked, 1, None), lambda: write._write(checked, "x"),
                    lambda: edit._edit(checked, "outside", "inside", False)):
        with pytest.raises(OSError, match="leads outside"):
            attempt()
    assert (outside.parent / "a.md").read_text() == "outside, not to be read\n"
    os.mkfifo(workspace / "notes.old" / "pipe")
    with pytest.raises(OSError, match="named pipe"):
        read._read(guard.resolve("notes.old/pipe"), 1, None)


async def test_a_grep_that_backtracks_without_end_stops_in_its_time_and_the_app_goes_on_meanwhile(
        core: Core, chat: Conversation, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line a sandboxed command wrote and a pattern a model steered by a web page could send: Python's own `re`
    takes hours over it, holding the interpreter lock, so the GUI could not draw meanwhile and nothing stopped it."""
    monkeypatch.setattr("desktop.tools.filesystem.GREP_SECONDS", 3.0)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "printf '%s!\\n' $(printf 'a%.0s' $(seq 40))"
                                                                       " > trap.txt"}}]},
             {"tool_calls": [{"name": "grep", "arguments": {"pattern": "(a|aa)+$", "path": "trap.txt"}}]},
             {"content": "It gave up."})
    gaps: list[float] = []

    async def ticking() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.05)
            gaps.append(time.monotonic() - last)
            last = time.monotonic()

    ticker = asyncio.create_task(ticking())
    try:
        end = await chat.ask("search it", timeout=60)
    finally:
        ticker.cancel()
    assert (core.workspace / "trap.txt").read_text() == "a" * 40 + "!\n"
    assert isinstance(end, TurnFinished) and end.content == "It gave up."
    assert tool_results(fake.requests[-1])[-1].startswith(
        "Error: stopped after 3 s: the regular expression '(a|aa)+$' backtracks too much on these files; simplify it")
    assert max(gaps) < 1.5, f"the event loop stood still for {max(gaps):.1f} s"

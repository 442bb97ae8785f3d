"""The app reaches the workspace only through desktop.workspace.access.

Every function in desktop/ that opens, lists, stats, writes or runs something itself (rather than through
desktop.workspace.access) is listed below with the reason it may: the files it touches are the app's own
(config, data folder, sessions), the user's choice in a dialog, or shipped with the app. New code that
touches files fails this test until it either goes through desktop.workspace.access or is added here with
its reason, so nobody adds a workspace reader that follows links out of it by accident."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

DESKTOP = Path(__file__).resolve().parents[1] / "desktop"
HELPER = "desktop/workspace/access.py"

# Calls that reach the file system (or run a program) by themselves.
_BUILTINS = {"open"}
_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "iterdir", "glob", "rglob", "stat", "lstat",
            "exists", "is_file", "is_dir", "unlink", "mkdir", "rmdir", "touch", "symlink_to", "chmod"}
_MODULES = {
    "os": {"open", "walk", "scandir", "listdir", "stat", "lstat", "remove", "unlink", "rename", "replace", "mkdir",
           "makedirs", "rmdir", "readlink", "symlink", "chmod", "link", "fdopen"},
    "os.path": {"exists", "isfile", "isdir", "getsize", "lexists"},
    "shutil": {"copytree", "rmtree", "copy", "copy2", "copyfile", "move"},
    "tempfile": {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory"},
    "subprocess": {"run", "Popen", "call", "check_call", "check_output"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "zipfile": {"ZipFile", "is_zipfile"},
}

_NOT_PATHS = {"self", "access"}  # a class's own methods; the helper itself

# "module:function": why it may touch files itself. Grouped by what the files are.
_OWN = "the app's own files (config, data folder, state, logs), which the sandbox hides"
_SESSIONS = "chat sessions and task transcripts in the data folder"
_SHIPPED = "files shipped with the app (resources, icons, built-in skills)"
_HELPER = ("the model helper: this interpreter and the app's own package, started in /, the import path without "
           "its working directory (-P)")
_DESKTOP = "the desktop's own folders (autostart, applications, icons), outside the workspace"
_CHOSEN = "a file or folder the person picked in a dialog or on the command line, read as they chose"
_BY_FD = "works by descriptors of folders opened through desktop.workspace.access (dir_fd=), never by path"
_HISTORY = "the memory history's repository in the data folder (its workspace side is read through desktop.workspace.access)"
_GUARDED = "metadata of a path the file tools' guard accepted; contents are opened through desktop.workspace.access"
_SANDBOX = "sets up and runs the exec sandbox (bwrap), which is what contains commands"
_CHECKPOINTS = "the checkpoints' own store in the data folder, which the sandbox hides"
_LISTED = "names only, each result checked by the file tools' guard before it is shown or opened"
_PROGRAMS = ("whether the program file the app is about to start exists; one in the workspace is refused, by "
             "where it is with links followed, before anything runs")
ALLOWED: dict[str, str] = {
    "desktop/agent/attachments.py:_read_chosen": _CHOSEN + "; only when no link on its way enters the workspace",
    "desktop/agent/attachments.py:problem": _CHOSEN + " (what it is, to say at once why it cannot be attached)",
    "desktop/kernel/atomic.py:_fsync_dir": _OWN,
    "desktop/settings.py:_keep_as_last_good": _OWN,
    "desktop/skills/loader.py:_Commands.finder": ("the PATH folders' times, as shutil.which looks there for a "
                                                  "skill's commands; nothing is read"),
    "desktop/settings.py:_last_good": _OWN,
    "desktop/chats/archive.py:_zip": "the zip the person named (written beside it, then renamed over it, never"
                                     " through a link), and " + _SESSIONS,
    "desktop/chats/cli.py:_taken": "the file named with -o",
    "desktop/chats/cli.py:_workspace": "config.yaml",
    "desktop/checkpoints/blobs.py:Blobs.collect": _CHECKPOINTS,
    "desktop/conversation/drafts.py:load_draft": _OWN + " (a window's unsent message, in the state folder)",
    "desktop/conversation/drafts.py:save_draft": _OWN + " (a window's unsent message, in the state folder)",
    "desktop/checkpoints/scan.py:_count": _BY_FD + "; lstat only, folders entered without following links",
    "desktop/checkpoints/manifests.py:Manifests._read": _CHECKPOINTS,
    "desktop/checkpoints/manifests.py:Manifests.others": _CHECKPOINTS,
    "desktop/checkpoints/service.py:Checkpoints.tidy": _SESSIONS,
    "desktop/kernel/atomic.py:atomic_write_bytes": _OWN,
    "desktop/mcp/importer.py:_load": _CHOSEN,
    "desktop/session/pins.py:set_pinned": _SESSIONS,
    "desktop/ui/chat/pasted.py:_create": _OWN,
    "desktop/usage/records.py:UsageLog.read_since": _OWN,
    "desktop/usage/days.py:DaySummary._load": _OWN,
    "desktop/usage/days.py:DaySummary._catch_up": _OWN,
    "desktop/kernel/atomic.py:append_jsonl": _OWN,
    "desktop/kernel/atomic.py:read_jsonl": _OWN,
    "desktop/autostart.py:is_enabled": _DESKTOP,
    "desktop/autostart.py:launch_command": _DESKTOP,
    "desktop/autostart.py:set_enabled": _DESKTOP,
    "desktop/checkpoints/blobs.py:Blobs._copy": _CHECKPOINTS,
    "desktop/checkpoints/blobs.py:Blobs.has": _CHECKPOINTS,
    "desktop/checkpoints/blobs.py:Blobs.size": _CHECKPOINTS,
    "desktop/checkpoints/undone.py:keep_copies": _CHECKPOINTS + "; the workspace side is read through "
                                                                "desktop.workspace.access",
    "desktop/checkpoints/undone.py:overwritten_folder": _CHECKPOINTS,
    "desktop/checkpoints/blobs.py:Blobs.keep": _BY_FD + "; the name is opened without following a link",
    "desktop/checkpoints/blobs.py:Blobs.read": _CHECKPOINTS,
    "desktop/checkpoints/journal.py:Journal.load": _CHECKPOINTS,
    "desktop/checkpoints/restore.py:_put_link": _BY_FD + "; makes a link, never follows one",
    "desktop/checkpoints/scan.py:_entry": _BY_FD + "; reads a link's text, never follows it",
    "desktop/checkpoints/scan.py:_walk": _BY_FD + "; lstat only, folders entered without following links",
    "desktop/checkpoints/scan.py:look": _BY_FD + "; lstat only, folders entered without following links",
    "desktop/cli/skills_cmd.py:_docs_at": _CHOSEN + "; each SKILL.md is parsed confined to its folder",
    "desktop/config.py:save_config": _OWN,  # reads the file it replaces, for the comments a person wrote in it
    "desktop/config.py:load_config": _OWN,
    "desktop/config.py:name_schema": _OWN,
    "desktop/config.py:write_schema": _OWN,
    "desktop/desktop_entry.py:_icons": _SHIPPED,
    "desktop/desktop_entry.py:install": _DESKTOP,
    "desktop/desktop_entry.py:uninstall": _DESKTOP,
    "desktop/kernel/logs.py:setup_logging": _OWN,
    "desktop/mcp/connection.py:ServerConnection._stderr": _OWN,
    "desktop/mcp/places.py:ServerPlaces.start_in": _OWN + " (a server's own working folder)",
    "desktop/memory/git_history.py:GitHistory._open": _HISTORY,
    "desktop/memory/git_history.py:_copy_objects.copy": _HISTORY,
    "desktop/memory/git_history.py:_import_old": _HISTORY,
    "desktop/memory/git_history.py:_new": _HISTORY,
    "desktop/kernel/paths.py:bundled": _SHIPPED,
    "desktop/providers/discovery.py:existing_nanobot_workspace": "whether ~/.nanobot/workspace exists, at first run",
    "desktop/providers/helper.py:ModelHelper._start": _HELPER,
    "desktop/providers/helper.py:_Process": _HELPER + " (the type of its handle)",
    "desktop/providers/helper.py:_exit_code": _HELPER + " (the type of its handle)",
    "desktop/providers/litellm_env.py:_defer_claude_tokenizer.read_on_first_use": _SHIPPED + " (litellm's data)",
    "desktop/providers/litellm_env.py:offline_environment": _SHIPPED + " (litellm's data)",
    "desktop/reminders/jobs.py:JobStore._set_aside": _OWN,
    "desktop/reminders/jobs.py:_flocked": _OWN,
    "desktop/reminders/jobs.py:JobStore.sole_runner": _OWN,
    "desktop/reminders/jobs.py:JobStore._parsed": _OWN,
    "desktop/reminders/jobs.py:JobStore.save": _OWN,
    "desktop/cli/__init__.py:_reader_gone": "the null device (os.devnull), put where a closed output pipe was",
    "desktop/cli/remote.py:_connect": "the running app's socket in the runtime folder",
    "desktop/cli/remote.py:socket_name": "the running app's socket in the runtime folder",
    "desktop/session/chat_model.py:choose_model": _SESSIONS,
    "desktop/session/session.py:SessionStore._list": _SESSIONS,
    "desktop/session/session.py:SessionStore._peek_changed": _SESSIONS,
    "desktop/session/session.py:SessionStore._children": _SESSIONS,
    "desktop/session/session.py:SessionStore._read": _SESSIONS,
    "desktop/session/session.py:SessionStore._read_own": _SESSIONS,
    "desktop/session/session.py:SessionStore.append": _SESSIONS,
    "desktop/session/session.py:SessionStore.delete": _SESSIONS,
    "desktop/session/session.py:SessionStore.set_aside": _SESSIONS,
    "desktop/session/session.py:_peek": _SESSIONS,
    "desktop/session/session.py:_keep_damaged": _SESSIONS,
    "desktop/session/search.py:_newest_first": _SESSIONS,
    "desktop/session/search.py:_search_file": _SESSIONS,
    "desktop/settings.py:Settings._write": _OWN,
    "desktop/shell_state.py:load_state": _OWN,
    "desktop/skills/files.py:copy_skill": _BY_FD + "; the source is a built-in or user skill",
    "desktop/skills/files.py:create_skill": _BY_FD,
    "desktop/skills/files.py:trash_skill": _BY_FD,
    "desktop/skills/install.py:_copy_folder": _BY_FD + "; the source is " + _CHOSEN,
    "desktop/skills/install.py:_extract": _CHOSEN + " (the archive); written through desktop.workspace.access",
    "desktop/skills/install.py:_install": _BY_FD + "; the source is " + _CHOSEN,
    "desktop/skills/install.py:_link": _BY_FD + "; the link's text is checked before and after",
    "desktop/skills/install.py:install_skill": _BY_FD + "; the source is " + _CHOSEN,
    "desktop/tools/egress.py:_short_dir": _SANDBOX + " (the egress proxy's socket folder, in the runtime folder)",
    "desktop/tools/egress.py:egress_proxy": _SANDBOX + " (the egress proxy's socket folder, in the runtime folder)",
    "desktop/tools/limits.py:_PidsCgroup.hit": _SANDBOX + " (the commands' cgroup)",
    "desktop/tools/limits.py:_PidsCgroup.kill_all": _SANDBOX + " (the commands' cgroup)",
    "desktop/tools/limits.py:_PidsCgroup.make": _SANDBOX + " (the commands' cgroup)",
    "desktop/tools/limits.py:_PidsCgroup.remove": _SANDBOX + " (the commands' cgroup)",
    "desktop/tools/limits.py:_own_user_namespace": _SANDBOX + " (/proc)",
    "desktop/tools/limits.py:_pids_root": _SANDBOX + " (the cgroup file system)",
    "desktop/tools/limits.py:_proc_files": _SANDBOX + " (/proc)",
    "desktop/tools/limits.py:_write": _SANDBOX + " (cgroup control files)",
    "desktop/tools/filesystem.py:GlobTool._glob": _LISTED,
    "desktop/tools/filesystem.py:GlobTool._glob.shown": _LISTED,
    "desktop/tools/glob_walk.py:matches": _LISTED + "; the walk follows no link",
    "desktop/tools/glob_walk.py:_Folder.__init__": _LISTED + "; lists a folder the walk opened by descriptor",
    "desktop/tools/glob_walk.py:_Folder.read": _LISTED + "; whether a name is a folder, a link counting as none",
    "desktop/tools/filesystem.py:GrepTool._files": _LISTED,
    "desktop/tools/filesystem.py:GrepTool._grep": _GUARDED,
    "desktop/tools/filesystem.py:ListDirTool._list": _GUARDED + "; the listing is of a folder opened so",
    "desktop/tools/filesystem.py:WriteFileTool._write": _GUARDED,
    "desktop/tools/filesystem.py:_describe_entry": _GUARDED + " (links inside a root are looked at via it)",
    "desktop/tools/filesystem.py:_require_file": _GUARDED,
    "desktop/tools/filesystem.py:write_text_keeping_mode": "file tools with the workspace restriction off: "
                                                           "the person let them write anywhere",
    "desktop/tools/path_guard.py:_hard_linked": _GUARDED,
    "desktop/tools/sandbox.py:Sandbox._mounts": _SANDBOX,
    "desktop/tools/sandbox.py:_probe_once": _SANDBOX,
    "desktop/tools/sandbox.py:_probe_sync": _SANDBOX,
    "desktop/tools/sandbox.py:takes_size": _SANDBOX + " (asks the bwrap found outside the workspace for its options)",
    "desktop/workspace/programs.py:program_outside": _PROGRAMS,
    "desktop/workspace/placement.py:_unusable": "whether the folder a person names as the workspace is a file or "
    "one they may not write in, before it is the workspace; nothing is read",
    "desktop/workspace/programs.py:arguments_outside": "whether an argument of a program the app is about to start "
    "names a file or a runnable folder in the workspace, judged with links followed; nothing is read or run",
    "desktop/tools/shell.py:ExecTool._run": _SANDBOX,
    "desktop/tools/shell.py:ExecTool._working_dir": _SANDBOX,
    "desktop/tools/shell.py:_as_path": "the command refusals' reading of a command's words: names only",
    "desktop/tools/shell.py:_hard_linked": "the command refusals: whether a named file is a hard link",
    "desktop/ui/app.py:Shell._config_changed": _OWN,
    "desktop/mcp/manage.py:claude_desktop_file": "Claude Desktop's configuration file, to offer importing",
    "desktop/ui/subagents/transcript.py:TranscriptDialog.load": _SESSIONS,
    "desktop/subagents/ledger.py:write": _OWN,
    "desktop/subagents/ledger.py:left_behind": _OWN,
    "desktop/ui/icons.py:_file_icon": _SHIPPED,
    "desktop/ui/icons.py:install_theme_icons": _SHIPPED,
    "desktop/ui/pyside_imports.py:_source_names_pyside": "the source file of a module the app imported (its own or an installed package's; nothing is imported from the workspace)",
    "desktop/ui/mcp/page.py:_tail": _OWN,
    "desktop/ui/settings_save.py:SettingsSave.form_config": _CHOSEN + " (is the workspace field a file?)",
    "desktop/voice/dispatcher.py:say": "runs spd-say with an answer's words on its input; no file of the workspace",
    "desktop/voice/dispatcher.py:_cancel": "runs spd-say --cancel; no file",
    "desktop/workspace/layout.py:ensure_workspace": "makes the workspace folder itself, where the person chose it",
    "desktop/workspace/layout.py:prompt_text": _SHIPPED + " (a workspace override is read through desktop.workspace.access)",
    "desktop/workspace/layout.py:template_text": _SHIPPED,
}


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: dict[str, list[str]] = defaultdict(list)

    def _visit_scope(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_scope  # noqa: N815

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        if isinstance(node.func, ast.Name) and node.func.id in _BUILTINS:
            self._record(node.func.id)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        """Called or handed on (`asyncio.to_thread(path.read_text)`): either way it reaches the file."""
        name = _attribute_name(node)
        if name is not None:
            self._record(name)
        self.generic_visit(node)

    def _record(self, name: str) -> None:
        self.found[".".join(self.scope) or "<module>"].append(name)


def _attribute_name(func: ast.Attribute) -> str | None:
    owner = ast.unparse(func.value)
    if owner in _MODULES and func.attr in _MODULES[owner]:
        return f"{owner}.{func.attr}"
    if func.attr in _METHODS and owner not in _MODULES and owner not in _NOT_PATHS:
        return f".{func.attr}"
    return None


def file_access() -> dict[str, list[str]]:
    """Every function in desktop/ (but the helper) that touches files itself, as "module:function" -> calls."""
    found: dict[str, list[str]] = {}
    for path in sorted(DESKTOP.rglob("*.py")):
        module = path.relative_to(DESKTOP.parent).as_posix()
        if module == HELPER:
            continue
        finder = _Finder()
        finder.visit(ast.parse(path.read_text(encoding="utf-8")))
        for scope, calls in finder.found.items():
            found[f"{module}:{scope}"] = calls
    return found


def test_file_access_outside_the_workspace_helper_is_listed_with_its_reason() -> None:
    found = file_access()
    new = sorted(set(found) - set(ALLOWED))
    assert not new, (
        "These functions touch files without desktop.workspace.access:\n"
        + "\n".join(f"  {key}: {', '.join(sorted(set(found[key])))}" for key in new)
        + "\nIf they can touch the workspace, read and write through desktop.workspace.access (it refuses links "
          "out of the workspace, pipes and oversized files). If they cannot, add them to ALLOWED in "
          f"{Path(__file__).name} with the reason.")
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"ALLOWED lists functions that no longer touch files (remove them): {stale}"


def test_the_finder_sees_the_ways_files_are_reached() -> None:
    source = ("import os, shutil\n"
              "def reader(p):\n    return p.read_text()\n"
              "async def runner():\n    await asyncio.create_subprocess_exec('git')\n"
              "class Store:\n    def walk(self):\n        return list(os.walk('.')), open('x'), shutil.rmtree('y')\n"
              "async def handed(p):\n    return await asyncio.to_thread(p.read_text, encoding='utf-8')\n"
              "def harmless(s):\n    return s.replace('a', 'b'), dialog.open(), self.touch(s), os.path.join(s)\n")
    finder = _Finder()
    finder.visit(ast.parse(source))
    assert dict(finder.found) == {"reader": [".read_text"], "runner": ["asyncio.create_subprocess_exec"],
                                  "Store.walk": ["os.walk", "open", "shutil.rmtree"], "handed": [".read_text"]}

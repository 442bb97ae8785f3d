"""Programs the app starts outside the sandbox (MCP servers, bwrap itself, spd-say) never come from the workspace.

Sandboxed commands can write anything in the workspace. A program found there, or started with the workspace as
its working folder, is theirs to replace or to configure: an executable planted in a folder of PATH that lies in
the workspace (a person's `~/projects/bin`), a module of the same name that `python -m` imports from its working
folder first, `node_modules/.bin` that `npx` looks in, `.npmrc`, `.env`, `uv.toml`. Run by the app, it would run
with everything the sandbox hides. So a program is resolved to the one file that will run, refused when that file
is in the workspace, and started by that absolute name (a later PATH lookup cannot pick another); and a working
folder in the workspace is refused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from desktop.kernel.paths import inside


class InWorkspace(Exception):
    """A program or a working folder in the workspace; the message says which and why, for the person."""


def program_outside(command: str, workspace: Path, *, cwd: Path, search_path: str | None = None) -> str | None:
    """The file `command` starts, by its absolute name: looked up in `search_path` (PATH by default) when it is a
    bare name, else taken from `cwd`; None when there is none (started by its bare name, a program planted on
    PATH in the meantime would be found). Raises InWorkspace when the file it is (links followed) is in the
    workspace."""
    if os.sep in command:
        found: str | None = str(cwd / Path(command).expanduser())
    else:
        found = shutil.which(command, path=search_path)
        if found is not None:
            found = os.path.abspath(found)  # a relative PATH entry ("." or "") names the app's own folder now
    if found is None or not os.path.isfile(found):
        return None
    real = Path(found).resolve()
    if inside(real, workspace.resolve()):
        raise InWorkspace(f"the program {command} is {real}, in the workspace, where sandboxed commands can replace "
                          "it; install it outside the workspace")
    return found


def folder_outside(folder: Path, workspace: Path) -> Path:
    """`folder` as a working folder for a program the app starts; raises InWorkspace when it is in the workspace
    (links followed)."""
    real = folder.expanduser().resolve()
    if inside(real, workspace.resolve()):
        raise InWorkspace(f"its working folder {folder} is in the workspace, where sandboxed commands can write the "
                          "files that configure the program (node_modules, .env, a module of the same name); "
                          "choose a folder outside it")
    return real


# A folder an interpreter runs as a program: `python DIR` runs DIR/__main__.py, `node DIR` its package.json's main
# or index.js, `uv run --project DIR` and `pip install DIR` build what pyproject.toml or setup.py say.
_RUN_AS_PROGRAM = ("__main__.py", "package.json", "index.js", "index.mjs", "index.cjs", "pyproject.toml", "setup.py")


def arguments_outside(args: list[str], workspace: Path, *, cwd: Path) -> None:
    """Raise InWorkspace when an argument names a file in the workspace (`python ~/Nanobot/server.py`,
    `--script=...`), or a folder there that an interpreter would run. Any other folder stays allowed: a server
    given the workspace to work on (a filesystem server) reads and writes data there, and runs none of it."""
    real_workspace = workspace.resolve()
    for arg in args:
        for real in _paths_in(arg, cwd):
            if not inside(real, real_workspace):
                continue
            runs = real.is_file() or (real.is_dir() and any((real / name).exists() for name in _RUN_AS_PROGRAM))
            if runs:
                named = "" if arg == str(real) else f" names {real}, which"
                raise InWorkspace(f"its argument {arg}{named} is in the workspace, where sandboxed commands can "
                                  "change what it runs; move it outside the workspace")


def variables_outside(env: dict[str, str], workspace: Path, *, cwd: Path) -> None:
    """Raise InWorkspace when a variable names a path in the workspace, file or folder: PYTHONPATH, NODE_PATH,
    NODE_OPTIONS=--require, LD_PRELOAD and a program's configuration file all load code or settings from where
    they point. (PATH is not judged here: `path_outside` drops the workspace's folders from it.)"""
    real_workspace = workspace.resolve()
    for name, value in env.items():
        if name == "PATH":
            continue
        named = str(real_workspace) in value or str(workspace) in value  # also among options, with spaces in it
        words = (value, *value.split())  # whole, and word by word: relative, `~` and linked spellings
        if named or any(inside(real, real_workspace) for word in words for real in _paths_in(word, cwd)):
            raise InWorkspace(f"its variable {name} names a place in the workspace, where sandboxed commands can "
                              "write what the program loads from there; point it outside the workspace")


def path_outside(search_path: str, workspace: Path) -> str:
    """`search_path` (PATH) without its folders in the workspace, nor relative ones: what a program the app starts
    looks up in turn (npx finds node there) is then never a file a sandboxed command planted."""
    real_workspace = workspace.resolve()
    kept = [folder for folder in search_path.split(os.pathsep)
            if os.path.isabs(folder) and not inside(Path(folder).resolve(), real_workspace)]
    return os.pathsep.join(kept)


def _paths_in(word: str, cwd: Path) -> list[Path]:
    """The places a command-line word may name: itself, the value after `=` (`--config=PATH`), each piece of a
    list like PYTHONPATH; relative ones from `cwd`, links followed. A bare name counts too: `server.py` or
    PYTHONPATH=`code` in a working folder outside the workspace may be a link into it."""
    pieces = [word, word.partition("=")[2]] if "=" in word else [word]
    return [(cwd / os.path.expanduser(part)).resolve() for piece in pieces for part in piece.split(os.pathsep) if part]

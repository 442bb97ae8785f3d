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
import re
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


_GAPS = re.compile(r"[\s'\"`(),;\[\]{}]+")  # what separates the words of code or of a list in one argument
_NAME_ENDS = r"(?=$|[/\s'\"`:;,)\]}])"  # what may follow a path where it is named within other words
# A folder an interpreter runs as a program: `python DIR` runs DIR/__main__.py, `node DIR` its package.json's main
# or index.js, `uv run --project DIR` and `pip install DIR` build what pyproject.toml or setup.py say.
_RUN_AS_PROGRAM = ("__main__.py", "package.json", "index.js", "index.mjs", "index.cjs", "pyproject.toml", "setup.py")


def arguments_outside(args: list[str], workspace: Path, *, cwd: Path) -> None:
    """Raise InWorkspace when an argument names a file in the workspace (`python ~/Nanobot/server.py`,
    `--script=...`), or a folder there that an interpreter would run. Any other folder stays allowed: a server
    given the workspace to work on (a filesystem server) reads and writes data there, and runs none of it.
    Refused as well: a one-letter option joined to a place in the workspace, file or folder (`perl -I~/Nanobot`
    loads its modules from there, like PYTHONPATH), and a place in the workspace named among other words, file or
    folder, by any spelling (`python -c "exec(open('~/Nanobot/x.py').read())"`, or through a link)."""
    real_workspace = workspace.resolve()
    for arg in args:
        joined = arg[2:] if len(arg) > 2 and arg[0] == "-" and arg[1] != "-" else ""
        if joined and any(inside(real, real_workspace) for real in _paths_in(joined, cwd)):
            raise InWorkspace(f"its option {arg} loads from a place in the workspace, where sandboxed commands can "
                              "write what the program loads; point it outside the workspace")
        found = [real for real in _paths_in(arg, cwd) if inside(real, real_workspace)]
        for real in found:
            if real.is_file() or (real.is_dir() and any((real / name).exists() for name in _RUN_AS_PROGRAM)):
                named = "" if arg == str(real) else f" names {real}, which"
                raise InWorkspace(f"its argument {arg}{named} is in the workspace, where sandboxed commands can "
                                  "change what it runs; move it outside the workspace")
        if found:
            continue
        words = [word for word in _GAPS.split(arg) if word]  # the paths code names: `open('/x/server.py')`
        among = next((real for word in words for real in _paths_in(word, cwd) if inside(real, real_workspace)),
                     None) if len(words) > 1 else None
        if among is not None or _mentions(arg, workspace):
            shown = arg if len(arg) <= 60 else arg[:59] + "…"
            place = f"{among}, in the workspace," if among is not None else "a place in the workspace"
            raise InWorkspace(f"its argument {shown!r} names {place} among other words (code, or an option joined "
                              "to its value), where sandboxed commands can change what it runs; move what it names "
                              "outside the workspace")


def variables_outside(env: dict[str, str], workspace: Path, *, cwd: Path) -> None:
    """Raise InWorkspace when a variable names a path in the workspace, file or folder: PYTHONPATH, NODE_PATH,
    NODE_OPTIONS=--require, LD_PRELOAD and a program's configuration file all load code or settings from where
    they point. (PATH is not judged here: `path_outside` drops the workspace's folders from it.)"""
    real_workspace = workspace.resolve()
    for name, value in env.items():
        if name == "PATH":
            continue
        words = (value, *_GAPS.split(value))  # whole, and word by word: relative, `~` and linked spellings
        if _mentions(value, workspace) or any(inside(real, real_workspace) for word in words
                                              for real in _paths_in(word, cwd)):
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


def _mentions(text: str, workspace: Path) -> bool:
    """Whether `text` holds the workspace's path, as configured, with links followed or spelled from `~`: also
    among options with spaces in them, and in code. A longer name (`~/Nanobot2` beside `~/Nanobot`) is not it."""
    spellings = {str(workspace), str(workspace.resolve())}
    home = os.path.expanduser("~")
    spellings |= {"~" + spelling[len(home):] for spelling in list(spellings)
                  if spelling != home and inside(Path(spelling), Path(home))}
    return any(re.search(re.escape(spelling) + _NAME_ENDS, text) for spelling in spellings)

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

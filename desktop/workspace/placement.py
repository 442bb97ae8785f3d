"""Where a workspace may not be: places whose files decide what runs outside the sandbox.

Sandboxed commands, and the file tools, may write anything in the workspace. That is safe only while nothing
outside the sandbox takes orders from those files. A workspace that is the home folder, or holds it, lets them
write the shell's start-up files, autostart entries, systemd user units, ~/.ssh/authorized_keys and Python's user
packages: all of them run later, unsandboxed, at the next login or start. A workspace holding the app's own
settings and data lets them add an MCP server to config.yaml, which the app starts; one holding the app itself
lets them change its code. And a workspace inside ~/.config or ~/.local is a folder other programs read their
settings from. So a configured workspace in any of these places is refused, with the reason, and the default
is used instead (config.yaml keeps every other key). So is one that cannot be a workspace at all, a file or a
folder the person may not write in: the app would otherwise fail to start on it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

from desktop.kernel.paths import Home, home, inside

_PACKAGE = Path(__file__).resolve().parents[1]  # desktop/


def misplaced(folder: Path, h: Home) -> str | None:
    """Why `folder` (links followed) cannot be the workspace, as the rest of "should be ...", or None when it can."""
    if not folder.expanduser().is_absolute():  # taken from the folder each command starts in: a workspace each
        return (f"a full path, such as ~/{folder} (a relative one names another folder for each folder a command "
                "is started in)")
    real = folder.expanduser().resolve()
    user_home = Path.home().resolve()
    if inside(user_home, real):
        return (f"a folder other than your home folder {user_home} or one holding it (commands the assistant runs "
                "could then change what your shell and desktop run when you log in)")
    for own in (h.config_file.parent, h.data_dir):
        if inside(own.resolve(), real):
            return (f"a folder that does not hold Nanobot Tray's own settings and data in {own} (commands the "
                    "assistant runs could then rewrite them, and the app obeys them outside the sandbox)")
    for app in (Path(sys.prefix), _PACKAGE):
        if inside(app.resolve(), real):
            return (f"a folder that does not hold Nanobot Tray itself, installed in {app} (commands the assistant "
                    "runs could then change the app's code, which runs outside the sandbox)")
    for settings in _settings_folders(user_home):
        if inside(real, settings):
            return (f"a folder outside {settings}, where programs keep their settings and start-up files "
                    "(commands the assistant runs could then change them)")
    return _unusable(real)


def _unusable(real: Path) -> str | None:
    """Why `real` cannot hold the assistant's files: a file, or a place this user may not write."""
    if real.exists() and not real.is_dir():
        return "a folder, not a file"
    existing = next(folder for folder in (real, *real.parents) if folder.exists())
    if not existing.is_dir():  # a program's file, which this user may write and run: no folder can be made in it
        return f"a folder where one can be made ({existing} is a file)"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"a folder you may write in ({existing} is not)"
    return None


def configured_misplaced(value: str) -> str | None:
    """`misplaced` for the `workspace` key of config.yaml, judged against the app's home in force (an empty
    value means the default, which is the app's own choice)."""
    return misplaced(Path(value), home()) if value else None


def _settings_folders(user_home: Path) -> list[Path]:
    """~/.config and ~/.local (wherever XDG variables move the first and the data folder), ~/.ssh and ~/.gnupg."""
    named = [platformdirs.user_config_dir(), platformdirs.user_data_dir()]
    return [Path(p).resolve() for p in named] + [user_home / name for name in (".local", ".ssh", ".gnupg")]

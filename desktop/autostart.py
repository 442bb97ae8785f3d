"""Start at login (Linux/freedesktop): a desktop entry in ~/.config/autostart that runs this install.

Settings calls these through asyncio.to_thread (they touch files)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.paths import HOME_ENV

FILE_NAME = "nanobot-tray.desktop"


def is_supported() -> bool:
    return sys.platform.startswith("linux")


def autostart_file() -> Path:
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "autostart" / FILE_NAME


def is_enabled() -> bool:
    path = autostart_file()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return "\nHidden=true" not in text and "X-GNOME-Autostart-enabled=false" not in text


def launch_command() -> str:
    """The command line that starts this very install at login (a venv is not on the login PATH)."""
    if getattr(sys, "frozen", False):
        argv = [sys.executable]
    else:
        script = Path(sys.executable).with_name("nanobot-tray")
        argv = [str(script)] if script.is_file() else [sys.executable, "-m", "desktop"]
    custom_home = os.environ.get(HOME_ENV)
    if custom_home:
        argv = ["env", f"{HOME_ENV}={Path(custom_home).expanduser().resolve()}", *argv]
    return " ".join(_quote(arg) for arg in argv)


def set_enabled(on: bool) -> None:
    """Write or remove the autostart entry; raises OSError with the path if that fails."""
    if not is_supported():
        raise OSError("starting at login is only supported on Linux desktops so far")
    path = autostart_file()
    if not on:
        path.unlink(missing_ok=True)
        return
    atomic_write_text(path, "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Name=Nanobot Tray",
        "Comment=A personal AI assistant in your system tray",
        f"Exec={launch_command()}",
        "Icon=nanobot-tray",
        "Terminal=false",
        "X-GNOME-Autostart-enabled=true",
        "",
    ]))


def _quote(arg: str) -> str:
    """Quote per the Desktop Entry spec: double quotes with \\ " ` $ escaped, and % doubled."""
    if arg and all(c.isalnum() or c in "/._-=+:," for c in arg):
        return arg
    escaped = "".join("\\" + c if c in '\\"`$' else c for c in arg).replace("%", "%%")
    return f'"{escaped}"'

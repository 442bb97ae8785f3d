"""The application-menu entry and icons (freedesktop): for pip installs in the user's data folder, and for
the .deb under /usr/share (packaging/build.sh calls the same command with --data-dir and --exec).

Only the files listed here are written, and uninstall removes exactly those, nothing a user made."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from desktop.autostart import FILE_NAME, launch_command
from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.paths import bundled


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def entry_text(exec_line: str) -> str:
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Name=Nanobot Tray",
        "GenericName=AI Assistant",
        "Comment=A personal AI assistant in your system tray",
        f"Exec={exec_line}",
        "Icon=nanobot-tray",
        "Terminal=false",
        "Categories=Utility;",
        "Keywords=AI;assistant;chat;agent;",
        "StartupNotify=false",
        "",
    ])


def _icons(data_dir: Path) -> list[tuple[Path, Path]]:
    """(shipped icon, where it goes) for every size and state."""
    icons = bundled("resources") / "icons"
    pairs = [(png, data_dir / "icons" / "hicolor" / size.name / "apps" / png.name)
             for size in sorted((icons / "hicolor").iterdir()) for png in sorted((size / "apps").glob("*.png"))]
    pairs += [(svg, data_dir / "icons" / "hicolor" / "scalable" / "apps" / svg.name)
              for svg in sorted(icons.glob("nanobot-tray*.svg"))]
    return pairs


def entry_path(data_dir: Path) -> Path:
    return data_dir / "applications" / FILE_NAME


def install(data_dir: Path, exec_line: str | None = None) -> list[Path]:
    """Write the menu entry (running this install unless `exec_line` says otherwise) and the icons."""
    written = [entry_path(data_dir)]
    atomic_write_text(written[0], entry_text(exec_line or launch_command()))
    for source, target in _icons(data_dir):
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        written.append(target)
    return written


def uninstall(data_dir: Path) -> list[Path]:
    """Remove what install wrote; the paths that were there."""
    removed = []
    for path in [entry_path(data_dir), *(target for _source, target in _icons(data_dir))]:
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed

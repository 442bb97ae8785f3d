"""`nanobot-tray install-desktop-entry` / `uninstall-desktop-entry`: the app in the desktop's menu (pip installs;
the .deb ships the same entry)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from desktop import desktop_entry


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    install = sub.add_parser("install-desktop-entry",
                             help="add Nanobot Tray to the application menu, with its icons (this user)")
    install.add_argument("--exec", dest="exec_line", metavar="COMMAND",
                         help="the entry's command line (default: the absolute path of this install)")
    remove = sub.add_parser("uninstall-desktop-entry", help="remove the menu entry and icons that install wrote")
    for parser in (install, remove):
        parser.add_argument("--data-dir", type=Path, default=None,
                            help="instead of $XDG_DATA_HOME or ~/.local/share (packaging uses usr/share)")
    install.set_defaults(func=run_install)
    remove.set_defaults(func=run_uninstall)


def run_install(args: argparse.Namespace) -> int:
    if not sys.platform.startswith("linux"):
        print("error: menu entries are written for Linux desktops; on Windows and macOS use the packaged app "
              "(packaging/README.md)", file=sys.stderr)
        return 1
    data_dir = args.data_dir or desktop_entry.data_home()
    try:
        written = desktop_entry.install(data_dir, args.exec_line)
    except OSError as exc:
        print(f"error: could not write the menu entry: {exc}", file=sys.stderr)
        return 1
    print(f"Installed {written[0]} and {len(written) - 1} icons under {data_dir / 'icons' / 'hicolor'}. "
          "Run this again after moving the install.")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or desktop_entry.data_home()
    try:
        removed = desktop_entry.uninstall(data_dir)
    except OSError as exc:
        print(f"error: could not remove the menu entry: {exc}", file=sys.stderr)
        return 1
    print(f"Removed {len(removed)} files (menu entry and icons)." if removed else "No menu entry was installed.")
    return 0

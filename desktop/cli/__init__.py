"""Command line: `nanobot-tray` starts the tray app; subcommands work headless.

With the app running, subcommands that offer `serve` run inside it (desktop/cli/remote.py says how); this
module imports the subcommands only after that attempt, so a forwarded command loads almost nothing."""

from __future__ import annotations

import argparse
import sys

from desktop import __version__
from desktop.cli import remote


def build_parser() -> argparse.ArgumentParser:
    from desktop.cli import (
        agent_cmd,
        config_cmd,
        cron_cmd,
        desktop_entry_cmd,
        doctor_cmd,
        dream_cmd,
        heartbeat_cmd,
        keys_cmd,
        mcp_cmd,
        skills_cmd,
    )
    from desktop.usage import command as usage_cmd

    # Each subcommand module offers `add_parser(subparsers)` and sets `func` (and `serve` to be forwarded).
    subcommands = [agent_cmd, keys_cmd, doctor_cmd, skills_cmd, dream_cmd, cron_cmd, heartbeat_cmd, mcp_cmd,
                   usage_cmd, desktop_entry_cmd, config_cmd]
    parser = argparse.ArgumentParser(prog="nanobot-tray", description="A personal AI assistant in your system tray.")
    parser.add_argument("--version", action="version", version=f"nanobot-tray {__version__}")
    parser.add_argument("--quick", nargs="?", const="", metavar="TEXT",
                        help="open the quick prompt in the running app (optionally pre-filled)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in subcommands:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if remote.open_quick(argv):
        return 0
    code = remote.forward(argv)
    if code is not None:
        return code
    from desktop.kernel.logs import setup_logging
    from desktop.kernel.paths import home

    args = build_parser().parse_args(argv)
    if args.command is None:
        setup_logging(args.verbose, home().logs_dir)
        from desktop.ui.app import run_app

        return run_app(args)
    setup_logging(args.verbose)
    return int(args.func(args) or 0)

"""Command line: `nanobot-tray` starts the tray app; subcommands work headless."""

from __future__ import annotations

import argparse

from desktop import __version__
from desktop.cli import agent_cmd, doctor_cmd, dream_cmd, keys_cmd, mcp_cmd, skills_cmd
from desktop.logs import setup_logging
from desktop.paths import home

# Each subcommand module offers `add_parser(subparsers)` and sets `func` on its parser.
SUBCOMMANDS = [agent_cmd, keys_cmd, doctor_cmd, skills_cmd, dream_cmd, mcp_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nanobot-tray", description="A personal AI assistant in your system tray.")
    parser.add_argument("--version", action="version", version=f"nanobot-tray {__version__}")
    parser.add_argument("--quick", nargs="?", const="", metavar="TEXT",
                        help="open the quick prompt in the running app (optionally pre-filled)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command is None:
        setup_logging(args.verbose, home().logs_dir)
        from desktop.ui.app import run_app

        return run_app(args)
    setup_logging(args.verbose)
    return int(args.func(args) or 0)

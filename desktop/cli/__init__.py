"""Command line: `nanobot-tray` starts the tray app; subcommands work headless.

A subcommand is a module offering `add_parser(subparsers)`, which sets `func` (and `serve`, to be forwarded).
The app's own subcommands are listed here; a feature brings its own as `Feature(cli="module")`
(desktop/kernel/host.py), so adding one edits nothing here. With the app running, subcommands that offer
`serve` run inside it (desktop/cli/remote.py says how); this module imports the subcommands, and the
features, only after that attempt, so a forwarded command loads almost nothing."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys

from desktop import __version__
from desktop.cli import remote
from desktop.providers import HELPER_FLAG

# The app's own subcommands, before and after the features' ones in `--help`.
FIRST = ("desktop.cli.agent_cmd", "desktop.cli.keys_cmd", "desktop.cli.doctor_cmd", "desktop.cli.skills_cmd")
LAST = ("desktop.cli.desktop_entry_cmd", "desktop.cli.config_cmd")
# The subcommand that talks to the model: its model helper (seconds of litellm's import, the longest part of
# `agent -m`) is started before the parser imports every subcommand and the core (0.2 s), not after.
MODEL_COMMAND = "agent"
INTERRUPTED = 130  # the exit status a shell gives a command that Ctrl+C (SIGINT) ended (128 + 2)
READER_GONE = 141  # the exit status a shell gives a command that SIGPIPE ended (128 + 13)


def global_options() -> argparse.ArgumentParser:
    """The options of the app itself. Parsed alone when nothing else is given, so starting the tray app does not
    import every subcommand and, through them, the agent core (0.1 s before the tray icon could show)."""
    parser = argparse.ArgumentParser(prog="nanobot-tray", add_help=False)
    parser.add_argument("--version", action="version", version=f"nanobot-tray {__version__}")
    parser.add_argument("--quick", nargs="?", const="", metavar="TEXT",
                        help="open the quick prompt in the running app (optionally pre-filled)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    parser.set_defaults(command=None)
    return parser


def build_parser() -> argparse.ArgumentParser:
    from desktop.core import FEATURES

    subcommands = [*FIRST, *(f.cli for f in FEATURES if f.cli is not None), *LAST]
    parser = argparse.ArgumentParser(prog="nanobot-tray", description="A personal AI assistant in your system tray.",
                                     parents=[global_options()])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in subcommands:
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        code = _run(argv)
        sys.stdout.flush()  # here, not in the exit's flush, which could only say "Exception ignored"
        return code
    except KeyboardInterrupt:  # Ctrl+C, in any command: ended as a shell expects, not in a traceback
        return INTERRUPTED
    except BrokenPipeError:
        return _reader_gone()


def _reader_gone() -> int:
    """The output's reader left (`nanobot-tray ... | head -1`): end as quietly as a command that SIGPIPE ends,
    where a traceback was printed. What is still unwritten goes nowhere, so the exit's flush does not fail too."""
    with contextlib.suppress(OSError, ValueError):  # a stdout that is no file has nothing left to flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return READER_GONE


def _run(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == [HELPER_FLAG] and len(argv) == 2:  # the app's own model helper, not a person's command
        from desktop.providers.helper_main import run

        return run(argv[1])
    if remote.open_quick(argv):
        return 0
    code = remote.forward(argv)
    if code is not None:
        return code
    from desktop.kernel.logs import setup_logging
    from desktop.kernel.paths import home

    args, rest = global_options().parse_known_args(argv)
    if rest[:1] == [MODEL_COMMAND]:
        from desktop.providers.helper import warm

        warm()  # with the default idle time: the command sets its configured one once its core is built
    if rest:  # a subcommand, --help or a mistake: the whole parser says which
        args = build_parser().parse_args(argv)
    if args.command is None:
        setup_logging(args.verbose, home().logs_dir)
        from desktop.ui.app import run_app

        return run_app(args)
    setup_logging(args.verbose)
    return int(args.func(args) or 0)

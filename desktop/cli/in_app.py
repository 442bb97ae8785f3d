"""The app's side of forwarded commands (desktop/cli/remote.py): parse the client's argv with the same parser
and run the subcommand's `serve` against the app's own core, its output going back over the socket."""

from __future__ import annotations

import contextlib
import io
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from desktop.cli.remote import Forwarded
from desktop.core import Core

log = logging.getLogger(__name__)


def runner(core: Core) -> Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], Awaitable[int] | None]:
    """What the single-instance server calls for each "run" request once the core exists."""
    def run(message: dict[str, Any], send: Callable[[dict[str, Any]], None]) -> Awaitable[int] | None:
        argv = message.get("argv")
        if not isinstance(argv, list) or not all(isinstance(arg, str) for arg in argv):
            return None
        from desktop.cli import build_parser

        try:  # a usage error is the client's to print: it runs the command itself and argparse explains
            with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
                args = build_parser().parse_args(argv)
        except SystemExit:
            return None
        serve = getattr(args, "serve", None)
        if serve is None:
            return None
        cwd = message.get("cwd")
        args.client_cwd = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else ""  # for the client's file names
        log.info("running a forwarded command: %s", argv[0])
        job: Awaitable[int] | None = serve(args, core, Forwarded(send))
        return job
    return run

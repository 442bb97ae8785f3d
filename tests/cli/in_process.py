"""The command line in this process: `desktop.cli.main(argv)` with its own home, stdin, PATH and no keys.

A `nanobot-tray` subprocess pays litellm's import (seconds of CPU) before it does anything, and the suite has
paid it once already. So each command runs as a real subprocess in at least one test (`run_cli` in
test_cli.py: argv, exit code and environment as a user has them) and in-process (`run_main`) where what is
under test is the command's behaviour, not the interpreter's start. `run_main` gives the command what a new
process would have: the environment it is given, an empty keyring, a fresh sandbox probe, its own logging."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import keyring

from desktop.cli import main
from desktop.tools import sandbox
from tests.memkeyring import MemoryKeyring


@dataclass
class Ran:
    """What a command left, named as subprocess.CompletedProcess names it."""

    returncode: int
    stdout: str
    stderr: str


def run_main(home: Path, *argv: str, stdin: str = "", path: str | None = None, env_extra: dict[str, str] | None = None,
             keys: MemoryKeyring | None = None) -> Ran:
    """`nanobot-tray ARGV` run in-process against `home` (and `path` as PATH, `env_extra` added to its
    environment), with `stdin` as its input; `keys`: a keyring kept from one command to the next (the user's)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["NANOBOT_TRAY_HOME"] = str(home)
    if path is not None:
        env["PATH"] = path
    env.update(env_extra or {})
    out, err = io.StringIO(), io.StringIO()
    with _environment(env), _fresh_process_state(keys), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        sys.stdin = io.StringIO(stdin)
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse's errors and --help
            code = exc.code if isinstance(exc.code, int) else 1
    return Ran(code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _fresh_process_state(keys: MemoryKeyring | None) -> Iterator[None]:
    """What a new process starts with, restored afterwards: stdin, an empty keyring (as the subprocesses'
    null keyring: no key stored), no sandbox probe yet, and logging as it was (setup_logging adds a handler)."""
    stdin, backend, probed = sys.stdin, keyring.get_keyring(), sandbox._probed
    root = logging.getLogger()
    loggers = [root, *(lg for lg in logging.root.manager.loggerDict.values() if isinstance(lg, logging.Logger))]
    handlers, levels = list(root.handlers), [(logger, logger.level) for logger in loggers]
    keyring.set_keyring(keys or MemoryKeyring())
    sandbox._probed = {}
    try:
        yield
    finally:
        sys.stdin = stdin
        keyring.set_keyring(backend)
        sandbox._probed = probed
        root.handlers[:] = handlers
        for logger, level in levels:
            logger.setLevel(level)

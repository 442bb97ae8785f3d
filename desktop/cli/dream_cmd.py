"""`nanobot-tray dream`: one Dream from the command line (what the app's timer does every few hours)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable

from desktop.cli.remote import Output, Terminal, add_standalone
from desktop.core import Core, build_core
from desktop.memory import Memory
from desktop.memory.dream import DreamError
from desktop.memory.git_history import GitError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("dream", help="update long-term memory from the history now (one Dream)")
    add_standalone(parser)
    parser.set_defaults(func=run, serve=serve)


def serve(args: argparse.Namespace, core: Core, out: Output) -> Awaitable[int]:
    """In the running app: the same Dream its timer runs, with its memory and settings."""
    return _dream(core, out)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main())


async def _main() -> int:
    core = build_core()
    for problem in core.settings.problems:
        print(f"config: {problem}", file=sys.stderr)
    if not core.config.model:
        print(f"error: no model is configured; set `model` in {core.home.config_file}", file=sys.stderr)
        return 2
    return await _dream(core, Terminal())


async def _dream(core: Core, out: Output) -> int:
    try:
        result = await core.get(Memory).dream.run()
    except (DreamError, GitError) as exc:
        out.err(f"error: Dream failed: {exc}. Nothing was lost; the next run retries.")
        return 1
    out.out(result.describe())
    for finding in result.findings:
        out.out(f"  {finding}")
    return 0

"""`nanobot-tray dream`: one Dream from the command line (what the app's timer does every few hours)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from desktop.core import build_core
from desktop.memory.dream import DreamError
from desktop.memory.git_history import GitError


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("dream", help="update long-term memory from the history now (one Dream)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main())
    except KeyboardInterrupt:
        return 130


async def _main() -> int:
    core = build_core()
    for problem in core.settings.problems:
        print(f"config: {problem}", file=sys.stderr)
    if not core.config.model:
        print(f"error: no model is configured; set `model` in {core.home.config_file}", file=sys.stderr)
        return 2
    try:
        result = await core.memory.dream.run()
    except (DreamError, GitError) as exc:
        print(f"error: Dream failed: {exc}. Nothing was lost; the next run retries.", file=sys.stderr)
        return 1
    print(result.describe())
    for finding in result.findings:
        print(f"  {finding}")
    return 0

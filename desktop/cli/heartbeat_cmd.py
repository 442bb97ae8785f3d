"""`nanobot-tray heartbeat`: one heartbeat now (what the app does every `schedules.heartbeat_interval`)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable

from desktop.cli.remote import Output, Terminal, add_standalone
from desktop.core import Core
from desktop.heartbeat import Heartbeat
from desktop.scheduler import Scheduler


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = sub.add_parser("heartbeat", help="look at the active tasks in HEARTBEAT.md now (one heartbeat)")
    add_standalone(parser)
    parser.set_defaults(func=run, serve=serve)


def serve(args: argparse.Namespace, core: Core, out: Output) -> Awaitable[int]:
    """In the running app: its heartbeat chat, so the exchanges kept are the same."""
    return _beat(core, out)


def run(args: argparse.Namespace) -> int:
    return asyncio.run(_main())


async def _main() -> int:
    from desktop.cli.mcp_cmd import print_startup_waits
    from desktop.core import build_core

    core = await asyncio.to_thread(build_core)
    for problem in core.settings.problems:
        print(f"config: {problem}", file=sys.stderr)
    core.get(Scheduler).timer = None  # this one heartbeat only
    print_startup_waits(core)
    await core.start()
    try:
        return await _beat(core, Terminal())
    finally:
        await core.close()


async def _beat(core: Core, out: Output) -> int:
    from desktop.heartbeat import FILE, wanted_text

    path = core.workspace / FILE
    if not core.config.model:
        out.err(f"error: no model is configured; set `model` in {core.home.config_file}")
        return 2
    beat = await core.get(Heartbeat).run()
    if beat.wanted:
        out.err(f"note: {wanted_text(beat.wanted)}")
    if beat.error:
        out.err(f"error: the heartbeat failed: {beat.error}")
        return 1
    if not beat.tasks:
        out.out(f"No active tasks in {path}: nothing to do (no model call).")
    elif beat.quiet:
        count = len(beat.tasks)
        out.out(f"Nothing needs you ({count} task{'s' if count != 1 else ''} looked at).")
    else:
        out.out(beat.answer)
    return 0

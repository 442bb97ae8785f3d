"""Processes a test's command left running, found by a token it carries.

Counting every process on the machine would not do: other test runs share it. A command starts with
`export NBT_RUNAWAY=<token>;`, so the shell carries the token in its command line and everything it
starts (forks, setsid'd daemons) in its environment. Zombies have neither and are
not counted: they hold no memory and wait only for their parent to reap them.
"""

from __future__ import annotations

import asyncio
import os
import uuid


def marked(command: str) -> tuple[str, str]:
    """`command` carrying a fresh token, and the token."""
    token = uuid.uuid4().hex
    return f"export NBT_RUNAWAY={token}; {command}", token


def carrying(token: str) -> list[int]:
    """Live processes (other than this one) with `token` in their command line or environment."""
    needle = token.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{name}/{part}", "rb") as file:
                    if needle in file.read():
                        found.append(int(name))
                        break
            except OSError:  # gone meanwhile, or not ours to read
                continue
    return found


async def left_running(token: str, wait: float = 5.0) -> list[int]:
    """What still carries `token` after up to `wait` seconds (killed processes take a moment to go)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while (alive := await asyncio.to_thread(carrying, token)) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    return alive

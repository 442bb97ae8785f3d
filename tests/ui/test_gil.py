"""desktop/ui/gil.py: the short switch interval lasts exactly as long as the work that asked for it."""

from __future__ import annotations

import asyncio
import sys

from desktop.ui.gil import SWITCH_S, gui_first


def test_overlapping_blocks_keep_the_short_interval_until_the_last_ends_then_give_the_usual_back() -> None:
    usual = sys.getswitchinterval()
    assert usual > SWITCH_S

    async def block(started: asyncio.Event, release: asyncio.Event) -> None:
        with gui_first():
            started.set()
            await release.wait()

    async def scenario() -> list[float]:
        seen = []
        first_in, second_in, first_out, second_out = (asyncio.Event() for _ in range(4))
        first = asyncio.create_task(block(first_in, first_out))
        second = asyncio.create_task(block(second_in, second_out))
        await first_in.wait()
        await second_in.wait()
        seen.append(sys.getswitchinterval())
        first_out.set()
        await first
        seen.append(sys.getswitchinterval())  # the second still runs
        second_out.set()
        await second
        seen.append(sys.getswitchinterval())
        return seen

    assert asyncio.run(scenario()) == [SWITCH_S, SWITCH_S, usual]


def test_a_failing_block_gives_the_usual_interval_back() -> None:
    usual = sys.getswitchinterval()
    try:
        with gui_first():
            raise OSError("the lexer's file could not be read")
    except OSError:
        pass
    assert sys.getswitchinterval() == usual

"""The bridge carries a message from a window to the agent and the streamed answer back, on the Qt loop."""

from __future__ import annotations

import asyncio

import qasync

from desktop.bus import TextDelta, ToolFinished, TurnFinished
from desktop.ui.bridge import CoreBridge
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until


async def test_turn_with_exec_runs_on_the_qt_loop(bridge: CoreBridge, fake: FakeOpenAI) -> None:
    assert isinstance(asyncio.get_running_loop(), qasync.QEventLoop)
    seen: list[object] = []
    bridge.event.connect(seen.append)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo from-a-subprocess"}}]},
             {"content": "All done."})
    bridge.send("desktop:main", "run something")
    await until(lambda: any(isinstance(e, TurnFinished) for e in seen))
    finished = next(e for e in seen if isinstance(e, ToolFinished))
    assert "from-a-subprocess" in finished.result and finished.ok
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "All done."

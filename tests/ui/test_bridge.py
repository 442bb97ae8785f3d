"""The bridge carries a message from a window to the agent and the streamed answer back, on the Qt loop."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import qasync

import desktop.ui
from desktop.kernel.bus import TextDelta, ToolFinished, TurnFinished
from desktop.subagents import Subagents
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


def test_windows_reach_the_core_only_through_the_bridge() -> None:
    """One door: a window that reaches into `bridge.core` (or any `.core.`) would bypass it."""
    ui = Path(desktop.ui.__file__).parent
    offenders = [f"{path.relative_to(ui)}:{number}"
                 for path in sorted(ui.rglob("*.py")) if path.name not in ("bridge.py", "app.py")
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"\.core\b", line)]
    assert offenders == []


async def test_deleting_a_chat_stops_its_background_tasks(bridge: CoreBridge, fake: FakeOpenAI) -> None:
    fake.default = lambda body: {"content": "Report: slow.", "delay": 10}
    task = bridge.core.get(Subagents).spawn("a slow job", "Slow", "desktop:doomed")
    await bridge.delete_chat("desktop:doomed")
    await until(lambda: task.status == "cancelled", message="the task stopped")


def test_the_bridge_stays_the_conversation_door() -> None:
    """Send, stop, events, chats, settings and questions: at most 15 public methods. A feature's own calls belong
    on its own service (found with `host.get`), or the bridge grows back into the hallway issue 21 took apart."""
    public = [name for name, member in vars(CoreBridge).items()
              if not name.startswith("_") and (callable(member) or isinstance(member, property))]
    assert len(public) <= 15, public

"""The model picker in the chat header: lists the server's models, a pick is saved and answers the next
message, and it follows changes made elsewhere (/model, Settings, a hand edit)."""

from __future__ import annotations

from pathlib import Path

import yaml

from desktop.kernel.bus import TurnFinished
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until


def offered(window: ChatWindow) -> list[str]:
    picker = window.model_picker
    return [picker.itemText(i) for i in range(picker.count())]


async def test_a_pick_is_saved_and_answers_the_next_message(window: ChatWindow, bridge: CoreBridge,
                                                           fake: FakeOpenAI, tmp_path: Path) -> None:
    picker = window.model_picker
    assert picker.currentText() == "openai/test"
    fake.models = ["test", "qwen3:8b"]
    picker.showPopup()  # the first opening asks the server, then shows the list
    await until(lambda: picker.view().isVisible() and offered(window) == ["openai/qwen3:8b", "openai/test"])
    assert picker.currentText() == "openai/test"
    window.grab().save(str(tmp_path / "chat-header.png"))
    picker.hidePopup()

    picker.activated.emit(offered(window).index("openai/qwen3:8b"))  # what a click in the list sends
    await until(lambda: bridge.core.config.model == "openai/qwen3:8b")
    saved = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert saved["model"] == "openai/qwen3:8b" and bridge.core.config.model == "openai/qwen3:8b"
    finished: list[object] = []
    bridge.event.connect(lambda e: finished.append(e) if isinstance(e, TurnFinished) else None)
    bridge.send(window.current_key, "hello")
    await until(lambda: finished, timeout=60)
    assert fake.requests[-1]["model"] == "qwen3:8b"


async def test_it_follows_a_session_model_and_a_hand_edit(window: ChatWindow, bridge: CoreBridge) -> None:
    picker = window.model_picker
    await bridge.core.settings.override("model", "openai/just-now")
    assert picker.currentText() == "openai/just-now"
    path = bridge.core.settings.path
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["model"] = "openai/edited"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    await bridge.core.settings.reload()  # what the app's file watcher does
    assert picker.currentText() == "openai/edited"


async def test_a_refused_pick_keeps_the_model_and_says_why(window: ChatWindow, bridge: CoreBridge) -> None:
    path = bridge.core.settings.path
    path.write_text(path.read_text(encoding="utf-8") + "colour: blue\n", encoding="utf-8")
    picker = window.model_picker
    picker.addItem("openai/other")
    assert not await picker.pick("openai/other")
    assert picker.currentText() == "openai/test" and bridge.core.config.model == "openai/test"
    assert "colour: blue" in path.read_text(encoding="utf-8")

"""The model picker in the chat header: lists the server's models, a pick answers in this chat only (other
chats and config.yaml keep theirs), and it follows the default model and `/model NAME` typed in the chat."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from desktop.conversation.transcript import Kind, rows_from_messages
from desktop.kernel.bus import TurnFinished
from desktop.session.session import SessionStore
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.quick_prompt import QuickPrompt
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until


def offered(window: ChatWindow) -> list[str]:
    picker = window.model_picker
    return [picker.itemText(i) for i in range(picker.count())]


async def answered(window: ChatWindow, bridge: CoreBridge, text: str) -> None:
    finished: list[object] = []
    key = window.current_key
    bridge.event.connect(lambda e: finished.append(e) if isinstance(e, TurnFinished) and e.session_key == key
                         else None)
    window.send(text, [])
    await until(lambda: finished, timeout=60)


async def test_a_pick_answers_in_this_chat_only(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                tmp_path: Path) -> None:
    picker = window.model_picker
    await until(lambda: picker.currentText() == "openai/test")
    fake.models = ["test", "qwen3:8b"]
    picker.showPopup()  # the first opening asks the server, then shows the list
    await until(lambda: picker.view().isVisible() and offered(window) == ["openai/qwen3:8b", "openai/test"])
    assert picker.currentText() == "openai/test"
    window.grab().save(str(tmp_path / "chat-header.png"))
    picker.hidePopup()

    picker.activated.emit(offered(window).index("openai/qwen3:8b"))  # what a click in the list sends
    await answered(window, bridge, "hello")
    assert fake.requests[-1]["model"] == "qwen3:8b"
    saved = yaml.safe_load(bridge.core.settings.path.read_text(encoding="utf-8"))
    assert saved["model"] == "openai/test" and bridge.core.config.model == "openai/test"

    window.new_chat()  # another chat: the default model, and its messages go to it
    await until(lambda: picker.currentText() == "openai/test")
    await answered(window, bridge, "and here?")
    assert fake.requests[-1]["model"] == "test"

    window.show_session("desktop:test")  # back in the first chat: its pick is still there
    await until(lambda: picker.currentText() == "openai/qwen3:8b")


async def test_each_opening_asks_again_showing_the_last_list_meanwhile(window: ChatWindow, fake: FakeOpenAI,
                                                                       tmp_path: Path) -> None:
    picker = window.model_picker
    await until(lambda: picker.currentText() == "openai/test")
    picker.showPopup()
    await until(lambda: picker.view().isVisible() and offered(window) == ["openai/test"])
    picker.hidePopup()

    fake.models = ["test", "test-large"]  # the server started serving a second model
    picker.showPopup()
    assert picker.view().isVisible() and offered(window) == ["openai/test"]  # at once: the list it had
    await until(lambda: offered(window) == ["openai/test", "openai/test-large"], message="the fresh list")
    assert picker.view().isVisible() and picker.currentText() == "openai/test"
    picker.view().window().grab().save(str(tmp_path / "picker-updated.png"))  # the open list
    picker.hidePopup()


async def test_it_follows_the_default_and_a_model_typed_in_the_chat(window: ChatWindow, bridge: CoreBridge) -> None:
    picker = window.model_picker
    path = bridge.core.settings.path
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["model"] = "openai/edited"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    await bridge.core.settings.reload()  # what the app's file watcher does
    await until(lambda: picker.currentText() == "openai/edited")  # a chat without a pick follows the default

    await answered(window, bridge, "/model openai/typed")
    await until(lambda: picker.currentText() == "openai/typed")


async def test_a_model_typed_in_the_chat_is_still_said_there_after_a_restart(window: ChatWindow, bridge: CoreBridge,
                                                                             fake: FakeOpenAI, qtbot: QtBot,
                                                                             tmp_path: Path) -> None:
    await answered(window, bridge, "hello")
    await answered(window, bridge, "/model openai/test-large")
    assert [(r.kind, r.text) for r in window.models[window.current_key].rows][-2:] == [
        (Kind.USER, "/model openai/test-large"),
        (Kind.ASSISTANT, "This chat now uses openai/test-large (other chats keep theirs; new chats start with "
                         "openai/test).")]

    reread = await SessionStore(bridge.core.sessions.directory).load(window.current_key)  # what a restart reads
    rows = rows_from_messages(reread.messages)
    assert [(r.kind, r.text) for r in rows][-1] == (Kind.NOTICE, "Model for this chat: openai/test-large")
    assert [r.kind for r in rows].count(Kind.USER) == 1  # a quiet line, not one of the person's messages

    restarted = ChatWindow(bridge)  # a window that reads the chat afresh, as after a restart
    qtbot.addWidget(restarted)
    restarted.resize(900, 640)
    restarted.show()
    restarted.show_session(window.current_key)
    await until(lambda: restarted.models[window.current_key].loaded)
    shown = restarted.models[window.current_key].rows
    assert (shown[-1].kind, shown[-1].text) == (Kind.NOTICE, "Model for this chat: openai/test-large")
    restarted.grab().save(str(tmp_path / "model-notice.png"))
    await answered(window, bridge, "and now?")  # the line in the history is no trouble to the model
    assert fake.requests[-1]["model"] == "test-large"


async def test_a_refused_pick_keeps_the_model_and_says_why(window: ChatWindow, bridge: CoreBridge,
                                                           fake: FakeOpenAI) -> None:
    await answered(window, bridge, "hello")  # the chat has a file now
    path = bridge.core.sessions.path_for(window.current_key)
    kept = path.read_text(encoding="utf-8")
    path.unlink()
    path.mkdir()  # the file cannot be replaced: the pick cannot be kept
    picker = window.model_picker
    picker.addItem("openai/other")
    assert not await picker.pick("openai/other")
    assert picker.currentText() == "openai/test"
    shutil.rmtree(path)
    path.write_text(kept, encoding="utf-8")
    await answered(window, bridge, "still there?")
    assert fake.requests[-1]["model"] == "test"


async def test_the_quick_prompt_picks_the_model_of_its_quick_chat(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI,
                                                                 tmp_path: Path) -> None:
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup()
    picker = prompt.model_picker
    await until(lambda: picker.currentText() == "openai/test" and picker.isEnabled())
    picker.addItem("openai/qwen3:8b")
    picker.activated.emit(picker.findText("openai/qwen3:8b"))  # a click in its list
    prompt.grab().save(str(tmp_path / "quick-prompt.png"))
    qtbot.keyClicks(prompt.input, "Quick one?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", timeout=60)
    assert fake.requests[-1]["model"] == "qwen3:8b"
    assert bridge.core.config.model == "openai/test"

    prompt.start_new()  # the next quick chat starts with the default again
    await until(lambda: picker.currentText() == "openai/test")

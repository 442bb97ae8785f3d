"""The chips in the quick prompt and the chat: what will be sent shows first, can be read whole or removed,
and reaches the model quoted under the question (text) or as an image part (a screenshot, vision models only)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPixmap
from pytestqt.qtbot import QtBot

from desktop.context.captures import FOLDER
from desktop.context.quoting import snippet
from desktop.providers.litellm_env import litellm
from desktop.ui.bridge import CoreBridge
from desktop.ui.context.shelf import ImageChip, TextChip
from desktop.ui.quick_prompt import QuickPrompt
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until

pytestmark = pytest.mark.usefixtures("litellm_imported")
CODE = "def area(r):\n    return 3.14 * r * r\n\nprint(area(2))\n"


@pytest.fixture(scope="module")
def litellm_imported() -> None:
    litellm()


def _menu_action(prompt: QuickPrompt, text: str):  # type: ignore[no-untyped-def]
    menu = prompt.findChild(type(prompt.shelf.add_button(lambda: None).menu()))
    assert menu is not None
    menu.aboutToShow.emit()
    return next(a for a in menu.actions() if a.text().startswith(text))


async def _prompt(qtbot: QtBot, bridge: CoreBridge) -> QuickPrompt:
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup()
    await until(lambda: prompt.model_picker.currentText() != "", message="the chat's model shown")
    return prompt


async def test_the_clipboard_chip_shows_first_lines_expands_and_goes_quoted_under_the_question(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    QGuiApplication.clipboard().setText(CODE)
    prompt = await _prompt(qtbot, bridge)
    _menu_action(prompt, "Clipboard").trigger()
    [chip] = prompt.shelf.chips
    assert isinstance(chip, TextChip) and prompt.shelf.isVisible()
    assert chip.source.text() == "Clipboard · 4 lines"
    assert chip.preview.text() == "def area(r):\nreturn 3.14 * r * r …" and chip.full.isHidden()
    qtbot.mouseClick(chip.expand_button, Qt.MouseButton.LeftButton)
    assert chip.full.isVisible() and chip.full.toPlainText() == CODE and chip.preview.isHidden()
    prompt.grab().save(str(qtbot_artifact("quick-prompt-clipboard-chip.png")))

    fake.add({"content": "It prints 12.56."})
    qtbot.keyClicks(prompt.input, "What does this print?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="answer finished")
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert sent.endswith("What does this print?\n\nClipboard:\n> def area(r):\n>     return 3.14 * r * r\n>\n"
                         "> print(area(2))")
    assert prompt.shelf.empty and prompt.shelf.isHidden()  # sent: the next question starts bare
    assert prompt.question.text() == "What does this print?\nwith Clipboard"


async def test_a_removed_chip_is_not_sent_and_an_empty_clipboard_is_said(qtbot: QtBot, bridge: CoreBridge,
                                                                       fake: FakeOpenAI) -> None:
    QGuiApplication.clipboard().setText("secret note")
    prompt = await _prompt(qtbot, bridge)
    _menu_action(prompt, "Clipboard").trigger()
    qtbot.mouseClick(prompt.shelf.chips[0].close_button, Qt.MouseButton.LeftButton)
    assert prompt.shelf.empty
    QGuiApplication.clipboard().clear()
    _menu_action(prompt, "Clipboard").trigger()
    assert prompt.shelf.note.text() == "The clipboard holds no text." and prompt.shelf.empty
    fake.add({"content": "ok"})
    qtbot.keyClicks(prompt.input, "hello")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done")
    assert "secret note" not in json.dumps(fake.requests[-1]["messages"])


def _picture() -> QPixmap:
    picture = QPixmap(320, 200)
    picture.fill(QColor("#2a7ab0"))
    return picture


async def test_a_screenshot_goes_as_an_image_part_to_a_vision_model(qtbot: QtBot, bridge: CoreBridge,
                                                                    fake: FakeOpenAI) -> None:
    bridge.core.config.model = "openai/gpt-4o"  # the scripted server answers any model name
    prompt = await _prompt(qtbot, bridge)
    await prompt.shelf.add_picture(_picture(), "Screenshot of “Editor”")
    [chip] = prompt.shelf.chips
    assert isinstance(chip, ImageChip) and chip.sent and chip.warning.isHidden()
    assert chip.path.parent == bridge.core.home.data_dir / FOLDER and chip.path.read_bytes()[:4] == b"\x89PNG"
    fake.add({"content": "A blue rectangle."})
    qtbot.keyClicks(prompt.input, "What is on screen?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done")
    content = fake.requests[-1]["messages"][-1]["content"]
    assert isinstance(content, list) and content[0]["text"].endswith("What is on screen?")
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_a_model_without_vision_is_named_on_the_chip_and_gets_no_image(qtbot: QtBot, bridge: CoreBridge,
                                                                           fake: FakeOpenAI) -> None:
    prompt = await _prompt(qtbot, bridge)  # openai/test: litellm does not list it as reading images
    await prompt.shelf.add_picture(_picture(), "Region of the screen")
    [chip] = prompt.shelf.chips
    assert isinstance(chip, ImageChip) and not chip.sent and chip.warning.isVisible()
    assert chip.warning.text().startswith("openai/test does not read images")
    prompt.grab().save(str(qtbot_artifact("quick-prompt-screenshot-chip-no-vision.png")))
    fake.add({"content": "ok"})
    qtbot.keyClicks(prompt.input, "and this?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done")
    assert isinstance(fake.requests[-1]["messages"][-1]["content"], str)


def qtbot_artifact(name: str):  # type: ignore[no-untyped-def]
    from tests.e2e.xdesktop import ARTIFACTS

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name


async def test_a_chip_in_the_chat_shows_its_first_lines_plainly_not_boxed_like_a_pasted_text_preview(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    from desktop.ui.chat.window import ChatWindow

    chat = ChatWindow(bridge)
    qtbot.addWidget(chat)
    chat.show()
    chat.show_session("desktop:test")
    await until(lambda: chat.models["desktop:test"].loaded, message="the chat loaded")
    shelf = chat.composer.context
    assert shelf is not None
    shelf.add_snippet(snippet("Clipboard", CODE))
    [chip] = shelf.chips
    assert isinstance(chip, TextChip)
    await until(chip.preview.isVisible, message="the chip shown")
    picture, lines = chip.grab().toImage(), chip.preview.geometry()
    inside = picture.pixelColor(lines.right() - 3, lines.center().y())  # past the end of the text
    beside = picture.pixelColor(lines.left() - 3, lines.center().y())  # the chip's margin
    assert inside.name() == beside.name()  # no box of its own

"""The chips in the quick prompt and the chat: what will be sent shows first, can be read whole or removed,
and reaches the model quoted under the question (text) or as an image part (a screenshot, vision models only).
On Wayland the `+` menu's screenshot goes through the desktop portal's dialog (a stand-in on a bus of the
test's own: tests/portalstandin.py)."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPixmap
from pytestqt.qtbot import QtBot

from desktop.context import portal as portal_route
from desktop.context.captures import FOLDER
from desktop.context.quoting import snippet
from desktop.context.sources import Fetched, Listing, Offer
from desktop.ui.bridge import CoreBridge
from desktop.ui.context.capture import png_bytes
from desktop.ui.context.shelf import PORTAL_ENTRY, ImageChip, TextChip
from desktop.ui.quick_prompt import QuickPrompt
from tests.busstandin import private_bus
from tests.fakeserver import FakeOpenAI
from tests.pdfs import pdf
from tests.pipes import watched_pipe
from tests.portalstandin import ScreenshotPortal
from tests.ui.conftest import hover_tip, until

CODE = "def area(r):\n    return 3.14 * r * r\n\nprint(area(2))\n"


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


# ----- Wayland: the desktop portal's screenshot dialog

@pytest.fixture
def wayland(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A Wayland session as the app sees it, with a session bus of its own (nobody on it yet)."""
    with private_bus(tmp_path) as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
        monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
        monkeypatch.delenv("DISPLAY", raising=False)
        yield address


@pytest.fixture
def portal(wayland: str, tmp_path: Path) -> Iterator[Callable[[str], ScreenshotPortal]]:
    """Starts the portal stand-in on the session bus, answering as told."""
    started: list[ScreenshotPortal] = []
    folder = tmp_path / "Pictures"
    folder.mkdir()

    def start(answer: str) -> ScreenshotPortal:
        started.append(ScreenshotPortal(wayland, folder, _portal_png(), answer))
        return started[-1]

    yield start
    for stand_in in started:
        stand_in.close()


def _portal_png() -> bytes:
    image = QImage(400, 250, QImage.Format.Format_RGB32)
    image.fill(QColor("#e07b39"))
    return png_bytes(image)


async def _take_through_portal(prompt: QuickPrompt) -> None:
    entry = _menu_action(prompt, "Screenshot")
    assert entry.text() == PORTAL_ENTRY and entry.isEnabled()
    assert not _menu_action(prompt, "Pick a region").isVisible()  # the portal's dialog offers regions itself
    entry.trigger()


async def test_on_wayland_the_portals_picture_shows_as_a_chip_and_goes_to_a_vision_model(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, portal: Callable[[str], ScreenshotPortal]) -> None:
    stand_in = portal("ok")
    bridge.core.config.model = "openai/gpt-4o"
    prompt = await _prompt(qtbot, bridge)
    await _take_through_portal(prompt)
    await until(lambda: prompt.shelf.chips, message="the portal's picture attached")
    [chip] = prompt.shelf.chips
    assert isinstance(chip, ImageChip) and chip.sent and chip.source.text() == "Screenshot"
    assert chip.size_label.text() == "400×250 px" and prompt.isVisible()
    assert [asked["interactive"] for asked in stand_in.asked] == [True]  # the person picks, in the dialog
    assert chip.path.parent == bridge.core.home.data_dir / FOLDER
    assert chip.path.read_bytes() == stand_in.written[0].read_bytes()  # kept as the portal wrote it
    prompt.grab().save(str(qtbot_artifact("quick-prompt-portal-screenshot-chip.png")))

    fake.add({"content": "An orange rectangle."})
    qtbot.keyClicks(prompt.input, "What is this?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done")
    content = fake.requests[-1]["messages"][-1]["content"]
    assert isinstance(content, list) and content[0]["text"].endswith("What is this?")
    assert content[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(_portal_png()).decode()


async def test_a_cancelled_portal_dialog_attaches_nothing_and_says_nothing(
        qtbot: QtBot, bridge: CoreBridge, portal: Callable[[str], ScreenshotPortal]) -> None:
    stand_in = portal("cancel")
    prompt = await _prompt(qtbot, bridge)
    await _take_through_portal(prompt)
    await until(lambda: stand_in.asked, message="the portal asked")
    await until(prompt.isVisible, message="the quick prompt back after the dialog")
    assert prompt.shelf.empty and prompt.shelf.note.isHidden() and not prompt.shelf.note.text()


async def test_without_the_portal_the_menu_says_screenshots_need_it(
        qtbot: QtBot, bridge: CoreBridge, wayland: str) -> None:
    prompt = await _prompt(qtbot, bridge)
    await _take_through_portal(prompt)
    await until(lambda: prompt.shelf.note.text(), message="the words about the portal")
    assert prompt.shelf.note.text() == portal_route.NEEDS_PORTAL and prompt.shelf.note.isVisible()
    assert "Screenshots on Wayland need xdg-desktop-portal" in prompt.shelf.note.text()
    prompt.grab().save(str(qtbot_artifact("quick-prompt-portal-missing.png")))
    assert prompt.shelf.empty and prompt.isVisible()


async def test_a_portal_that_never_answers_is_given_up_on_with_a_message(
        qtbot: QtBot, bridge: CoreBridge, portal: Callable[[str], ScreenshotPortal],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(portal_route, "ANSWER_WITHIN", 1.0)
    stand_in = portal("never")
    prompt = await _prompt(qtbot, bridge)
    await _take_through_portal(prompt)
    await until(lambda: stand_in.asked, message="the portal asked")
    assert prompt.isHidden()  # out of the picture while the dialog is up
    await until(lambda: prompt.shelf.note.text(), message="the wait given up")
    assert prompt.shelf.note.text() == "No screenshot: the screenshot dialog gave no answer within 1 second."
    assert len(stand_in.closed) == 1 and stand_in.closed[0].endswith(stand_in.asked[0]["handle_token"])
    assert prompt.shelf.empty and prompt.isVisible()


async def test_a_pdfs_chip_says_its_pages_before_it_goes_as_text(qtbot: QtBot, bridge: CoreBridge,
                                                                  fake: FakeOpenAI, tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf(["Sales doubled.", "Costs held."]))
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(b"%PDF-1.4 not really a document")
    prompt = await _prompt(qtbot, bridge)
    prompt.shelf.add_file(str(report))
    prompt.shelf.add_file(str(locked))
    chips = prompt.shelf.chips
    await until(lambda: [c.source.text() for c in chips] == ["File · report.pdf · 2 pages",
                                                           "File · locked.pdf · damaged"], message="pages counted")
    prompt.grab().save(str(qtbot_artifact("quick-prompt-pdf-chip.png")))
    qtbot.mouseClick(chips[1].close_button, Qt.MouseButton.LeftButton)  # ✕: only the readable one goes
    fake.add({"content": "Sales doubled."})
    qtbot.keyClicks(prompt.input, "What happened?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="answer finished")
    sent = fake.requests[-1]["messages"][-1]["content"]
    assert "[Attached PDF “report.pdf” (" in sent and "2 pages)" in sent and "[Page 2]\nCosts held." in sent


async def test_a_files_path_that_spells_markup_shows_on_hover_as_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """A file a sandboxed command made in folders spelling <img src="/a/pipe"> (or <IMG SRC='...'>): the chip's
    tooltip (its whole path) read it as markup, and Qt read the file it named as the tooltip was shown: a named
    pipe froze the app for good. The tooltip shows the path as words."""
    pipe = tmp_path / "pipe"
    folder = tmp_path / f'<img src="{pipe}">' / f"<IMG SRC='{pipe}'>"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("hi")
    prompt = await _prompt(qtbot, bridge)
    with watched_pipe(pipe) as opened:
        prompt.shelf.add_file(str(folder / "notes.md"))
        chip = prompt.shelf.chips[0]
        prompt.grab()  # laid out and painted, as on screen
        tip = hover_tip(chip.source)
        qtbot.mouseClick(chip.close_button, Qt.MouseButton.LeftButton)
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tip == str(folder / "notes.md")
    assert opened == [], "the chip read the pipe its path named"


class SlowServer:
    """A source of offers (as the MCP resources are) that answers once told to: its name for a resource is its own."""

    title = "Resource"
    waiting = "Asking the servers…"

    def __init__(self) -> None:
        self.go = asyncio.Event()

    def available(self) -> bool:
        return True

    async def listing(self) -> Listing:
        return Listing([], [])

    async def fetch(self, offer: Offer, images: bool) -> Fetched:
        await self.go.wait()
        return Fetched()


async def test_a_resource_named_as_markup_is_named_as_words_while_it_is_read_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, tmp_path: Path) -> None:
    """An MCP server names its resources: while one is read for the message, the line over the chips names it,
    and a name spelling <img src="/a/pipe"> was read as markup there, and Qt read the file it named as the line
    was shown: a named pipe froze the app for good. The line names it as words."""
    pipe = tmp_path / "pipe"
    label = f'notes · <img src="{pipe}">'
    server = SlowServer()
    prompt = await _prompt(qtbot, bridge)
    sent: list[bool] = []
    with watched_pipe(pipe) as opened:
        prompt.shelf.add_offer(server, Offer(label, "text/plain", "notes://list"))
        assert prompt.shelf.read_first(lambda: sent.append(True))
        await until(lambda: prompt.shelf.note.isVisible(), message="the line saying it is read")
        prompt.grab()  # laid out and painted, as on screen
        said = prompt.shelf.note.text()
        server.go.set()
        await until(lambda: sent == [True], message="read, then sent")
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert said == f"Reading {label}…"
    assert opened == [], "the line read the pipe the resource's name pointed at"

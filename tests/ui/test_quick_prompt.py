"""The quick prompt as a user drives it: type, Enter, read the streamed answer, Esc, Ctrl+Enter."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from desktop.conversation.drafts import draft_path
from desktop.conversation.transcript import CUT_OFF, Kind
from desktop.kernel.bus import TextDelta
from desktop.ui.bridge import CoreBridge
from desktop.ui.context.shelf import FileChip, ImageChip
from desktop.ui.quick_prompt import SHADOW, WIDTH, QuickPrompt
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.pipes import watched_pipe
from tests.ui.conftest import STALL, STOPPED_WITHIN, open_chat, until


def popped_up(qtbot: QtBot, bridge: CoreBridge) -> QuickPrompt:
    """The quick prompt on screen, as its hotkey shows it."""
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup()
    return prompt


async def test_enter_streams_the_answer_inline_and_esc_hides(qtbot: QtBot, bridge: CoreBridge,
                                                             fake: FakeOpenAI) -> None:
    fake.add({"content": "The capital of **France** is Paris.", "chunk": 4})
    deltas: list[str] = []
    bridge.event.connect(lambda e: deltas.append(e.text) if isinstance(e, TextDelta) else None)
    prompt = popped_up(qtbot, bridge)
    assert prompt.isVisible() and prompt.windowFlags() & Qt.WindowType.FramelessWindowHint
    collapsed = prompt.height()
    qtbot.keyClicks(prompt.input, "Capital of France?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="answer finished")
    assert len(deltas) > 3  # it really streamed in pieces
    assert prompt.answer.toPlainText() == "The capital of France is Paris."
    assert prompt.question.text() == "Capital of France?" and prompt.input.text() == ""
    assert prompt.height() > collapsed  # grew to show the answer
    assert fake.requests[-1]["messages"][-1]["content"].endswith("Capital of France?")
    session = await bridge.core.sessions.load(prompt.session_key)
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    assert not prompt.isVisible()


async def test_popup_prefills_and_ctrl_enter_continues_in_chat(qtbot: QtBot, bridge: CoreBridge,
                                                               fake: FakeOpenAI) -> None:
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    opened: list[tuple[str, str, list[str]]] = []
    prompt.open_in_chat.connect(lambda key, text, media: opened.append((key, text, media)))
    prompt.popup("summarise this selection", session_key="desktop:abc")
    assert prompt.input.text() == "summarise this selection"
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert opened == [("desktop:abc", "summarise this selection", [])] and not prompt.isVisible()
    assert prompt.input.text() == ""  # the chat window sends it, so its transcript shows the question


async def test_a_failed_turn_shows_the_error_inline(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    fake.add({"status": 401, "body": {"error": {"message": "invalid api key"}}})
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "hello")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
    await until(lambda: prompt.status.property("error") is True, message="error shown")
    assert "refused the API key (HTTP 401)" in prompt.status.text()


async def test_a_model_servers_refusal_that_spells_markup_shows_as_words_and_loads_no_file(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    """A failed answer's line quotes what the model server said: words spelling <img src="/a/pipe"> were read as
    markup there, and Qt read the file they named as the line was shown (a named pipe froze the app for good). The
    line shows the words."""
    pipe = tmp_path / "pipe"
    said = [f'no such route: <img src="{pipe}">', f"no such route: <IMG SRC='{pipe}'>"]
    prompt = popped_up(qtbot, bridge)
    lines = []
    with watched_pipe(pipe) as opened:
        for words in said:
            fake.add({"status": 400, "body": {"error": {"message": words, "type": "invalid_request_error"}}})
            qtbot.keyClicks(prompt.input, "hello")
            qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
            await until(lambda w=words: w in prompt.status.text(), timeout=60, message="the refusal shown")
            prompt.grab()  # laid out and painted, as on screen
            lines.append(prompt.status.text())
        prompt.status.clear()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert all(line.startswith("The model request failed") for line in lines), lines
    assert opened == [], "the line read the pipe the server's words named"


async def test_the_question_shows_as_typed_not_as_markup(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    fake.add({"content": "It is *bold*."})
    prompt = popped_up(qtbot, bridge)
    typed = "is <b>this</b> bold? 2 * 3 _x_"
    qtbot.keyClicks(prompt.input, typed)
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="answer finished")
    # a QLabel guesses rich text from "<b>": the tags would vanish and "this" turn bold
    assert prompt.question.text() == typed and prompt.question.textFormat() == Qt.TextFormat.PlainText
    assert prompt.answer.toPlainText() == "It is bold."


async def test_esc_mid_answer_stops_it_and_then_closes(qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    fake.add({"content": "The first part, then a long pause before the rest.", "chunk": 14, "hang": STALL})
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "Tell me slowly")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.answer.toPlainText(), message="the first words")
    assert "Esc" in prompt.stop_button.text()
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    assert prompt.isVisible()
    await until(lambda: prompt.status.text() == "Stopped", timeout=STOPPED_WITHIN, message="the stop")
    assert prompt.answer.toPlainText().startswith("The first part") and "pause" not in prompt.answer.toPlainText()
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    assert not prompt.isVisible()


async def test_stop_ends_a_long_answer_and_copy_takes_it_as_markdown(qtbot: QtBot, bridge: CoreBridge,
                                                                     fake: FakeOpenAI) -> None:
    fake.add({"content": "The first part, **then** a long pause before the rest.", "chunk": 14, "hang": STALL})
    prompt = popped_up(qtbot, bridge)
    assert prompt.stop_button.isHidden() and prompt.copy_button.isHidden()
    qtbot.keyClicks(prompt.input, "Tell me slowly")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.answer.toPlainText(), message="the first words")
    assert not prompt.stop_button.isHidden() and prompt.copy_button.isHidden()
    prompt.stop_button.click()
    await until(lambda: prompt.status.text() == "Stopped", timeout=STOPPED_WITHIN, message="the stop")
    assert prompt.stop_button.isHidden() and not prompt.copy_button.isHidden()
    prompt.copy_button.click()
    copied = QGuiApplication.clipboard().text()
    assert copied.startswith("The first part") and "pause" not in copied  # what came before the stop
    assert prompt.status.text() == "Copied"


async def test_a_tool_call_shows_in_the_status_line_until_stop(qtbot: QtBot, bridge: CoreBridge,
                                                             fake: FakeOpenAI) -> None:
    fake.add({"content": "Let me look.", "tool_calls": [{"name": "exec", "arguments": {"command": "sleep 30.75"}}]})
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "What is slow?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Using exec…", message="the tool call")
    assert prompt.answer.toPlainText() == "Let me look." and not prompt.stop_button.isHidden()
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    await until(lambda: prompt.status.text() == "Stopped", message="the stop")
    assert prompt.answer.toPlainText() == "Let me look." and prompt.isVisible()


async def test_each_popup_is_a_new_quick_chat_unless_the_last_one_is_continued(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    prompt = popped_up(qtbot, bridge)
    assert prompt.context.isHidden()  # nothing to continue yet
    qtbot.keyClicks(prompt.input, "My cat is called Miso")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="first answer")
    first = prompt.session_key
    prompt.hide()

    prompt.popup()  # the hotkey again: a new chat, the last one offered
    assert prompt.session_key != first and prompt.question.isHidden()
    assert prompt.context.isVisible() and "Continue the last quick chat" in prompt.context.text()
    qtbot.keyClick(prompt.input, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    assert prompt.session_key == first and "Continuing the last quick chat" in prompt.context.text()
    qtbot.keyClicks(prompt.input, "What is my cat called?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="second answer")
    assert "My cat is called Miso" in json.dumps(fake.requests[-1]["messages"])  # it went on with the context

    qtbot.keyClick(prompt.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)  # New
    assert prompt.session_key != first and prompt.answer.isHidden()
    qtbot.keyClicks(prompt.input, "Unrelated question")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="third answer")
    assert "Miso" not in json.dumps(fake.requests[-1]["messages"])
    titles = {info.key: info.title for info in await bridge.list_chats()}
    assert titles[first] == "My cat is called Miso" and titles[prompt.session_key] == "Unrelated question"


async def test_what_is_typed_and_attached_but_not_asked_stays_until_asked(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    """Esc hides the prompt, not the question being written: the hotkey brings it back (selected, so typing a new
    one replaces it), with its files, as do Ctrl+Up and Ctrl+N, which change the chat it goes to."""
    notes = tmp_path / "notes.txt"
    notes.write_text("kept\n")
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "My cat is called Miso")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", message="first answer")
    first = prompt.session_key

    qtbot.keyClicks(prompt.input, "a long question I am still")
    prompt.shelf.add_file(str(notes))
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    assert not prompt.isVisible()
    prompt.popup()  # the hotkey again: a new chat, the question still being written
    assert prompt.session_key != first and prompt.question.isHidden()
    assert prompt.input.text() == "a long question I am still" and prompt.input.selectedText() == prompt.input.text()
    assert [chip.path for chip in prompt.shelf.chips if isinstance(chip, FileChip)] == [str(notes)]
    qtbot.keyClick(prompt.input, Qt.Key.Key_End)
    qtbot.keyClick(prompt.input, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    assert prompt.session_key == first and prompt.input.text() == "a long question I am still"
    qtbot.keyClick(prompt.input, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert prompt.session_key != first and prompt.input.text() == "a long question I am still"
    assert len(prompt.shelf.chips) == 1


async def test_enter_while_an_answer_streams_keeps_the_next_question_until_it_is_done(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    """A second question asked while the first answer streamed was sent behind it, and the prompt showed the rest
    of the first answer ("beta gamma…", its start cut off) under the second question, as if it answered it. Enter
    now keeps the question in the field and says to wait or stop; once the answer is done, Enter asks it."""
    fake.add({"content": "Alpha beta gamma delta epsilon zeta eta theta.", "chunk": 6, "pace": 0.2})
    fake.add({"content": "Second answer here."})
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "first question")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.answer.toPlainText(), message="the first words")
    qtbot.keyClicks(prompt.input, "second question")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    assert prompt.input.text() == "second question" and prompt.question.text() == "first question"
    assert "still coming" in prompt.shelf.note.text() and prompt.shelf.note.isVisible()
    await until(lambda: prompt.status.text() == "Done", message="the first answer done")
    assert prompt.answer.toPlainText() == "Alpha beta gamma delta epsilon zeta eta theta."
    assert not prompt.shelf.note.isVisible()
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done" and prompt.question.text() == "second question",
                message="the second answer")
    assert prompt.answer.toPlainText() == "Second answer here." and len(fake.requests) == 2


async def test_a_prefilled_popup_over_a_question_being_written_can_give_it_back(
        qtbot: QtBot, bridge: CoreBridge) -> None:
    """`nanobot-tray --quick "TEXT"` while a question is written but not asked: TEXT takes its place, as typing
    over it would, and Ctrl+Z brings the question back (it was gone for good, and its kept draft with it)."""
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "a long question I am still")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Escape)
    prompt.popup("translate this to French")
    assert prompt.input.text() == "translate this to French"
    qtbot.keyClick(prompt.input, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert prompt.input.text() == "a long question I am still"


async def test_a_question_written_but_not_asked_outlives_a_quit(qtbot: QtBot, bridge: CoreBridge) -> None:
    kept = draft_path(bridge.core.home.state_dir, "quick")
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "how do I rename a git branch")
    await until(lambda: kept.exists(), message="the question kept as it is typed")
    again = QuickPrompt(bridge)  # the next start's
    qtbot.addWidget(again)
    await until(lambda: again.input.text() == "how do I rename a git branch", message="the question given back")
    again.popup()
    assert again.input.selectedText() == "how do I rename a git branch"  # typing a new question replaces it


async def test_after_a_restart_the_newest_quick_chat_is_offered(qtbot: QtBot, bridge: CoreBridge) -> None:
    for key, text in (("quick:older", "old question"), ("quick:newer", "newer question")):
        session = await bridge.core.sessions.load(key)
        await bridge.core.sessions.append(session, {"role": "user", "content": text})
        await asyncio.sleep(1.1)  # updated_at has whole seconds
    prompt = popped_up(qtbot, bridge)
    await until(lambda: "Continue the last quick chat" in prompt.context.text(), message="the offer")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    assert prompt.session_key == "quick:newer"


@pytest.mark.parametrize(("step", "reason", "kept"), [
    pytest.param({"content": "Once upon a time there was a fox", "chunk": 5, "cut": 4, "reset": True},
                 "The answer broke off", "Once upon a tim", id="server-died"),
    pytest.param({"content": ""}, "finished without an answer", "", id="empty"),
    pytest.param({"content": "and again ", "endless": 0.2}, "kept streaming", "and agai", id="endless"),
])
async def test_a_faulty_answer_offers_retry_which_replaces_the_failed_turn(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI, step: dict[str, object], reason: str, kept: str) -> None:
    bridge.core.config.provider.timeout = 1.0  # an endless stream is cut at ten times this
    bridge.core.config.provider.retry_delays = []
    fake.add(step)
    prompt = popped_up(qtbot, bridge)
    qtbot.keyClicks(prompt.input, "tell me a story")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
    await until(lambda: prompt.status.property("error") is True, timeout=60, message="error shown")
    assert reason in prompt.status.text()
    if kept:  # what was read stays, marked as not whole
        text = prompt.answer.toPlainText()
        assert not prompt.answer.isHidden() and text.startswith(kept) and text.endswith(CUT_OFF)
    else:
        assert prompt.answer.isHidden() and not prompt.copy_button.isVisible()
    assert prompt.retry_button.isVisible()

    fake.add({"content": "The fox slept."})
    qtbot.mouseClick(prompt.retry_button, Qt.MouseButton.LeftButton)
    await until(lambda: prompt.status.text() == "Done", timeout=60)
    assert prompt.answer.toPlainText() == "The fox slept." and not prompt.retry_button.isVisible()
    saved = [json.loads(line) for line in bridge.core.sessions.path_for(prompt.session_key)
             .read_text(encoding="utf-8").splitlines()[1:]]
    assert [(m["role"], m["content"]) for m in saved] == [("user", "tell me a story"), ("assistant", "The fox slept.")]


async def test_an_unreachable_server_offers_open_settings(qtbot: QtBot, bridge: CoreBridge) -> None:
    bridge.core.config.api_base = "http://127.0.0.1:9/v1"  # nothing listens there
    bridge.core.config.provider.retry_delays = []
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    opened: list[bool] = []
    prompt.settings_requested.connect(lambda: opened.append(True))  # as the app wires it
    prompt.popup()
    qtbot.keyClicks(prompt.input, "hello?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
    await until(lambda: prompt.status.property("error") is True, timeout=60, message="error shown")
    assert "Can't reach the model server" in prompt.status.text()
    assert prompt.settings_button.isVisible() and prompt.retry_button.isVisible()
    prompt.grab().save("/tmp/quick-error.png")
    qtbot.mouseClick(prompt.settings_button, Qt.MouseButton.LeftButton)
    assert opened == [True] and not prompt.isVisible()


def _dark() -> QPalette:
    palette = QPalette()
    for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#eeeeee"),
                         (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#eeeeee"),
                         (QPalette.ColorRole.Button, "#3a3a3a"), (QPalette.ColorRole.ButtonText, "#eeeeee"),
                         (QPalette.ColorRole.Highlight, "#3d7fd6"), (QPalette.ColorRole.Dark, "#1a1a1a"),
                         (QPalette.ColorRole.Midlight, "#444444"), (QPalette.ColorRole.PlaceholderText, "#999999")):
        palette.setColor(role, QColor(colour))
    return palette


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("compositor", [False, True], ids=["no-compositor", "compositor"])
async def test_the_card_has_rounded_corners_and_a_shadow_where_the_desktop_can_show_one(
        qtbot: QtBot, bridge: CoreBridge, monkeypatch: pytest.MonkeyPatch, theme: str, compositor: bool) -> None:
    monkeypatch.setattr("desktop.ui.quick_prompt.composited", lambda: compositor)  # what the desktop offers
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    light = app.palette()
    app.setPalette(light if theme == "light" else _dark())
    try:
        prompt = QuickPrompt(bridge)
        qtbot.addWidget(prompt)
        prompt.popup("How do rounded corners look?")
        shot = prompt.grab().toImage()
        shot.save(f"/tmp/quick-card-{theme}-{'compositor' if compositor else 'mask'}.png")
    finally:
        app.setPalette(light)
    card = prompt.card.geometry()
    if compositor:  # translucent window: a soft shadow around the card, nothing painted in the far corner
        assert prompt.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        assert card.left() == SHADOW and prompt.width() == WIDTH + 2 * SHADOW
        assert shot.pixelColor(0, 0).alpha() < 40
        assert 0 < shot.pixelColor(card.left() - 2, card.center().y()).alpha() < 255  # the shadow
        assert prompt.mask().isEmpty()
    else:  # no compositor: the corners are cut away by a mask, so no square corner shows on the desktop
        assert not prompt.testAttribute(Qt.WidgetAttribute.WA_TranslucentBackground) and card.left() == 0
        assert not prompt.mask().contains(QPoint(1, 1)) and prompt.mask().contains(card.center())
        assert not prompt.mask().contains(QPoint(prompt.width() - 2, prompt.height() - 2))
    assert shot.pixelColor(card.center()).alpha() == 255  # the card itself is opaque
    edge, inside = shot.pixelColor(card.left(), card.center().y()), shot.pixelColor(card.left() + 4, card.center().y())
    assert abs(edge.lightness() - inside.lightness()) > 40  # a visible 1 px edge, in dark themes too


async def test_ctrl_v_of_a_screenshot_or_a_long_text_attaches_it_as_in_the_chat(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    bridge.core.config.model = "openai/gpt-4o"  # reads images (the scripted server answers any model name)
    prompt = popped_up(qtbot, bridge)
    screenshot = QImage(640, 360, QImage.Format.Format_RGB32)
    screenshot.fill(QColor("#3366cc"))
    QGuiApplication.clipboard().setImage(screenshot)
    qtbot.keyClick(prompt.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: prompt.shelf.chips, message="the pasted picture attached")
    [picture] = prompt.shelf.chips
    assert isinstance(picture, ImageChip) and picture.sent and prompt.input.text() == ""

    log = "\n".join(f"12:00:{i % 60:02d} worker {i} ok" for i in range(200))
    QGuiApplication.clipboard().setText(log)
    qtbot.keyClick(prompt.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: len(prompt.shelf.chips) == 2, message="the long paste attached")
    chip = prompt.shelf.chips[1]
    assert isinstance(chip, FileChip) and chip.source.text() == "Pasted text, 200 lines"
    assert prompt.input.text() == ""  # not squeezed into the one-line box
    assert chip.path.startswith(str(bridge.core.home.pasted_dir))
    prompt.grab().save("/tmp/quick-pasted.png")

    QGuiApplication.clipboard().setText("a few words")
    qtbot.keyClick(prompt.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert prompt.input.text() == "a few words" and len(prompt.shelf.chips) == 2  # typed in, as ever

    fake.add({"content": "A blue rectangle, and 200 fine workers."})
    qtbot.keyClick(prompt.input, Qt.Key.Key_Return)
    await until(lambda: prompt.status.text() == "Done", timeout=60)
    content = fake.requests[-1]["messages"][-1]["content"]
    assert any(part.get("type") == "image_url" for part in content)
    said = last_user_text(fake.requests[-1])
    assert "a few words" in said and "12:00:19 worker 199 ok" in said


async def test_retry_in_the_quick_prompt_shows_in_the_open_chat_as_a_retry_there(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    """The quick prompt opened from a chat asks in it; its answer fails and Retry asks again. The chat window, open
    on that chat, showed the question a second time with the new answer, the failed one above it, until the chat
    was read again. It shows what a Retry in the window shows: the question once, the new answer in the failed
    one's place, as reading the chat again does."""
    bridge.core.config.provider.retry_delays = []
    window = await open_chat(bridge, qtbot, "desktop:test", [])
    fake.add({"content": "Oslo."}, {"content": ""})
    qtbot.keyClicks(window.composer.input, "Capital of Norway?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models["desktop:test"]
    await until(lambda: not model.busy and model.rows[-1].text == "Oslo.", timeout=60, message="the first answer")
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup(session_key="desktop:test")
    qtbot.keyClicks(prompt.input, "And its second city?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
    await until(lambda: prompt.retry_button.isVisible() and not model.busy, timeout=60, message="the failure")

    fake.add({"content": "Bergen."})
    qtbot.mouseClick(prompt.retry_button, Qt.MouseButton.LeftButton)
    await until(lambda: prompt.status.text() == "Done" and not model.busy and model.rows[-1].text == "Bergen.",
                timeout=60, message="the retried answer in both")
    shown = [(row.kind, row.text) for row in model.rows]
    again = await open_chat(bridge, qtbot, "desktop:test", [])  # the chat read from its file
    assert shown == [(row.kind, row.text) for row in again.models["desktop:test"].rows]
    assert [text for _, text in shown] == ["Capital of Norway?", "Oslo.", "And its second city?", "Bergen."]


async def test_a_question_taken_into_the_open_chats_running_turn_shows_there(
        qtbot: QtBot, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    """The quick prompt opened from a chat asks in it while that chat's turn runs: the question is taken into the
    running turn, which answers it too. The chat window, open on that chat, showed it only by its answer (no row for
    the question) until the chat was read again. It shows the question where the chat's file has it."""
    window = await open_chat(bridge, qtbot, "desktop:test", [])
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "sleep 1"}}]},
             {"content": "Oslo; the second city is Bergen."})
    qtbot.keyClicks(window.composer.input, "Capital of Norway?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models["desktop:test"]
    await until(lambda: any(row.tool is not None for row in model.rows), timeout=60, message="the turn's step")
    prompt = QuickPrompt(bridge)
    qtbot.addWidget(prompt)
    prompt.popup(session_key="desktop:test")
    qtbot.keyClicks(prompt.input, "And its second city?")
    qtbot.keyClick(prompt.input, Qt.Key.Key_Enter)
    await until(lambda: not model.busy and model.rows[-1].text == "Oslo; the second city is Bergen.", timeout=60,
                message="the turn's answer")
    assert len(fake.requests) == 2 and "And its second city?" in last_user_text(fake.requests[1])  # taken in
    shown = [(row.kind, row.text) for row in model.rows]
    again = await open_chat(bridge, qtbot, "desktop:test", [])  # the chat read from its file
    assert shown == [(row.kind, row.text) for row in again.models["desktop:test"].rows]
    assert [(kind, text) for kind, text in shown if kind is not Kind.TOOL] == [
        (Kind.USER, "Capital of Norway?"), (Kind.USER, "And its second city?"),
        (Kind.ASSISTANT, "Oslo; the second city is Bergen.")]

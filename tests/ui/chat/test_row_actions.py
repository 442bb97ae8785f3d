"""Hover actions on messages: Copy, Regenerate the last answer, Edit the last question, Branch (tests/ui/chat/test_branches.py); each redo replaces
the last turn in the chat and in its saved session."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from desktop.conversation.drafts import draft_path
from desktop.conversation.transcript import Kind
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.pdfs import pdf
from tests.ui.chat.test_composer import SHOTS, chip_names, paste_text
from tests.ui.chat.test_window import TURN, hover, kinds, model_of, saved_messages, type_and_send
from tests.ui.conftest import until


def offered(window: ChatWindow) -> list[str]:
    actions = window.view.row_actions
    if not actions.isVisible():
        return []
    buttons = (actions.copy_button, actions.regenerate_button, actions.edit_button, actions.branch_button)
    return [b.text() for b in buttons if b.isVisible()]


async def ask(qtbot, window: ChatWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    type_and_send(qtbot, window, text)
    await until(lambda: not model_of(window).busy and kinds(window)[-1] is Kind.ASSISTANT, timeout=TURN)


WRITING = "a long message I am still writing"  # in the box before Edit: set aside, then given back


def click_edit(qtbot, window: ChatWindow, row: int = 0) -> None:  # type: ignore[no-untyped-def]
    """Edit on the question at row: the mouse on the answer below first, so the toolbar is placed on it afresh."""
    hover(window, row + 1)
    hover(window, row)
    qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)


def rewrite(qtbot, window: ChatWindow, words: str, row: int = 0) -> None:  # type: ignore[no-untyped-def]
    """Edit on the question at row, its words replaced in the box (not sent yet)."""
    click_edit(qtbot, window, row)
    window.composer.input.setPlainText(words)


async def answered(window: ChatWindow, text: str, message: str = "") -> None:
    """Until the turn is over and its last row says text."""
    await until(lambda: not model_of(window).busy and model_of(window).rows[-1].text == text, timeout=TURN,
                message=message)


async def leave_for_another_chat(window: ChatWindow) -> None:
    window.show_session("desktop:other")
    await until(lambda: model_of(window).loaded, message="the other chat read")


async def asked_again_while_it_runs(qtbot, window: ChatWindow, fake: FakeOpenAI,  # type: ignore[no-untyped-def]
                                    first: str, second: str, answer: str) -> None:
    """`first` asked, and `second` sent while the turn's first model call is still out: the turn takes it in. The
    window shows `second` where it was sent, before the turn's step; the chat's file has it where the turn took it
    in, after the step. So the window's rows and the file's are in another order."""
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "true"}}], "delay": 2}, {"content": answer})
    type_and_send(qtbot, window, first)
    await until(lambda: model_of(window).busy, message="the turn began")
    type_and_send(qtbot, window, second)
    await answered(window, answer)
    assert second in last_user_text(fake.requests[-1])  # taken into the turn
    assert kinds(window) == [Kind.USER, Kind.USER, Kind.TOOL, Kind.ASSISTANT]
    assert [m["role"] for m in saved_messages(window.bridge, "desktop:test")] == [
        "user", "assistant", "tool", "user", "assistant"]


def saved_texts(bridge: CoreBridge) -> list[str]:
    """What the test chat's saved session holds, message by message."""
    return [m["content"] for m in saved_messages(bridge, "desktop:test")]


async def test_copy_and_regenerate_the_last_answer(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                   qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "First **answer**."}, {"content": "Second answer."}, {"content": "A better answer."})
    await ask(qtbot, window, "one")
    await ask(qtbot, window, "two")
    hover(window, 1)  # an earlier answer: Copy and Branch only
    assert offered(window) == ["Copy", "Branch"]
    qtbot.mouseClick(window.view.row_actions.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "First **answer**."

    hover(window, 3)
    assert offered(window) == ["Copy", "↻ Regenerate", "Branch"]
    qtbot.mouseClick(window.view.row_actions.regenerate_button, Qt.MouseButton.LeftButton)
    await answered(window, "A better answer.")
    assert [r.text for r in model_of(window).rows] == ["one", "First **answer**.", "two", "A better answer."]
    assert saved_texts(bridge) == ["one", "First **answer**.", "two", "A better answer."]
    assert "Second answer." not in json.dumps(fake.requests[-1]["messages"])


async def test_edit_the_last_question_replaces_its_turn(window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI,
                                                        qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    hover(window, 0)
    assert offered(window) == ["Copy", "Edit", "Branch"]
    qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
    assert window.composer.input.toPlainText() == "Biggest city in France?"
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)  # changed my mind: nothing changes
    assert window.isVisible() and window.composer.input.toPlainText() == "" and kinds(window) == [
        Kind.USER, Kind.ASSISTANT]

    rewrite(qtbot, window, "Second biggest city in France?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert saved_texts(bridge) == ["Second biggest city in France?", "Lyon is second."]
    assert last_user_text(fake.requests[-1]) == "Second biggest city in France?"
    assert "Paris." not in json.dumps(fake.requests[-1]["messages"])


async def test_editing_a_question_sets_aside_the_message_being_written_and_gives_it_back(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Edit fills the message box with the question; what was being written there, with its files, comes back
    when the edit is cancelled (Esc) or sent."""
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    qtbot.keyClicks(window.composer.input, WRITING)
    window.composer.add_files([str(notes)])
    click_edit(qtbot, window)
    assert window.composer.input.toPlainText() == "Biggest city in France?" and window.composer.attachments == []
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)
    assert window.composer.input.toPlainText() == WRITING
    assert window.composer.attachments == [str(notes)]

    rewrite(qtbot, window, "Second biggest city in France?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert window.composer.input.toPlainText() == WRITING
    assert window.composer.attachments == [str(notes)]


async def test_an_edit_left_for_another_chat_is_still_there_on_coming_back(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Edit, rewrite, then another chat: the rewritten question was dropped without a word. It is kept with its
    chat: there the message set aside before Edit is in the box; back, the edit goes on where it was, and the
    message set aside comes back once it is sent. Kept on disk meanwhile too: a restart gives it back in the box."""
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    qtbot.keyClicks(window.composer.input, WRITING)
    rewrite(qtbot, window, "Second biggest city in France?")

    await leave_for_another_chat(window)
    assert window.composer.input.toPlainText() == WRITING
    assert "Editing" not in window.composer.hint.text()
    kept = draft_path(bridge.core.home.state_dir, "chat")
    await until(lambda: kept.exists() and "Second biggest city" in kept.read_text(encoding="utf-8"),
                message="the rewritten question kept on disk with the message being written")
    assert WRITING in kept.read_text(encoding="utf-8")
    restarted = reopened(bridge, qtbot, "desktop:again")  # the next start's window: nothing of the edit is lost
    await until(lambda: "Second biggest city in France?" in restarted.composer.input.toPlainText(),
                message="the rewritten question given back after a restart")
    assert WRITING in restarted.composer.input.toPlainText()

    window.show_session("desktop:test")
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "Editing your last message" in window.composer.hint.text()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert window.composer.input.toPlainText() == WRITING


async def test_a_notification_about_the_chat_being_edited_keeps_the_edit(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A notification (or a search hit, or Recent chats) about the chat whose question is being edited: the chat
    was read again for it and the rewritten question dropped without a word. The edit goes on, the same question
    found again in the chat as read, and Enter still sends it in its place."""
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    qtbot.keyClicks(window.composer.input, WRITING)
    rewrite(qtbot, window, "Second biggest city in France?")

    window.show_message("desktop:test", 1)
    await until(lambda: model_of(window).loaded and model_of(window).row_of_message(1) is not None,
                message="the chat read again for the notification")
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "Editing your last message" in window.composer.hint.text()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert saved_texts(bridge) == ["Second biggest city in France?", "Lyon is second."]
    assert window.composer.input.toPlainText() == WRITING


async def test_a_notification_about_a_chat_left_mid_edit_keeps_the_edit(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The same for a chat left mid-edit: the notification opened it read again, the edit was taken up with a
    question no longer on screen, and Enter sent the rewritten words as a new message at the end."""
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    rewrite(qtbot, window, "Second biggest city in France?")
    await leave_for_another_chat(window)

    window.show_message("desktop:test", 1)
    await until(lambda: model_of(window).loaded and model_of(window).row_of_message(1) is not None,
                message="the chat read again for the notification")
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert saved_texts(bridge) == ["Second biggest city in France?", "Lyon is second."]


async def test_an_edit_is_found_again_in_a_chat_read_again_that_has_it_further_on(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A question sent while the turn ran shows where it was sent, but the chat as read again has it where the turn
    took it in, a row further on: the question edited is at another place in the chat as read. It is found there by
    its words, not taken for gone."""
    await asked_again_while_it_runs(qtbot, window, fake, "Biggest city in France?", "And in Italy?",
                                    "Paris; in Italy, Rome.")
    rewrite(qtbot, window, "And in Spain?", 1)

    window.show_message("desktop:test", 1)
    await until(lambda: model_of(window).loaded, message="the chat read again")
    assert kinds(window)[1:3] == [Kind.TOOL, Kind.USER]  # the question a row further on
    assert "Editing your last message" in window.composer.hint.text()
    fake.add({"content": "Madrid."})
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Madrid.")
    saved = saved_messages(bridge, "desktop:test")
    assert [m["content"] for m in saved if m["role"] == "user"] == ["Biggest city in France?", "And in Spain?"]
    assert saved[-1]["content"] == "Madrid."


async def test_enter_on_an_edit_while_its_chat_is_read_again_waits_for_it(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Enter on an edit while a notification has its chat read again (a long chat takes a moment): the question was
    not on screen yet, and the rewritten words went as a new message at the end. They stay in the box, the edit
    going on, and the hint says to send it once the chat is read."""
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    rewrite(qtbot, window, "Second biggest city in France?")

    window.show_message("desktop:test", 1)
    assert not model_of(window).loaded
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "still being read" in window.composer.hint.text()
    await until(lambda: model_of(window).loaded, message="the chat read again")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert saved_texts(bridge) == ["Second biggest city in France?", "Lyon is second."]


async def test_new_in_a_chat_being_edited_leaves_the_rewritten_words_to_send(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """/new in a chat left mid-edit (or open mid-edit) moves its history, question and all, under another key: the
    edit kept pointing at a question no longer shown, and Enter sent the rewritten words as a new message while the
    hint still said Editing. The edit ends: its words stay in the box and the hint says Enter sends them as new."""
    fake.add({"content": "Paris."})
    await ask(qtbot, window, "Biggest city in France?")
    qtbot.keyClicks(window.composer.input, WRITING)
    rewrite(qtbot, window, "Second biggest city in France?")
    await leave_for_another_chat(window)

    bridge.send("desktop:test", "/new")
    await until(lambda: [r.kind for r in window.models["desktop:test"].rows] == [Kind.ASSISTANT],
                timeout=TURN, message="the chat started afresh, with the reply to /new")
    window.show_session("desktop:test")
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "Editing" not in window.composer.hint.text()
    assert "no longer in its chat" in window.composer.hint.text()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: not model_of(window).busy and kinds(window)[-1] is Kind.ASSISTANT, timeout=TURN)
    assert [r.text for r in model_of(window).rows][1:] == [
        "Second biggest city in France?", "echo: Second biggest city in France?"]
    assert window.composer.input.toPlainText() == WRITING

    rewrite(qtbot, window, "Third biggest city in France?", 1)
    bridge.send("desktop:test", "/new")  # from elsewhere, while the chat is open mid-edit
    await until(lambda: kinds(window) == [Kind.ASSISTANT], timeout=TURN, message="the open chat started afresh")
    assert window.composer.input.toPlainText() == "Third biggest city in France?"
    assert "no longer in its chat" in window.composer.hint.text()


async def test_a_turn_arriving_while_the_last_question_is_edited_makes_it_an_earlier_one(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Edit on the last question ("sent in its place"), and meanwhile a message reaches the chat from elsewhere (the
    quick prompt, a reminder): the hint still said in its place, and Enter cut the newer turn off the screen while
    the saved chat lost that turn instead of the edited one. The question is an earlier one now: Enter sends it in a
    new branch, as for any earlier question, and the chat stays as it is."""
    fake.add({"content": "Paris."}, {"content": "Berlin."})
    await ask(qtbot, window, "Biggest city in France?")
    click_edit(qtbot, window)
    assert "Editing your last message" in window.composer.hint.text()
    window.composer.input.setPlainText("Second biggest city in France?")

    bridge.send("desktop:test", "Biggest city in Germany?")
    await answered(window, "Berlin.", message="the turn from elsewhere answered")
    assert "Editing an earlier message" in window.composer.hint.text()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: window.current_key != "desktop:test" and not model_of(window).busy
                and kinds(window)[-1] is Kind.ASSISTANT, timeout=TURN, message="the edit asked in a branch")
    assert [r.text for r in model_of(window).rows][0] == "Second biggest city in France?"
    assert saved_texts(bridge) == ["Biggest city in France?", "Paris.", "Biggest city in Germany?", "Berlin."]


async def test_deleting_the_chat_being_edited_leaves_the_rewritten_words(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Delete on the chat whose question is being rewritten: its messages go, as the person confirmed, but the
    rewritten words were never among them and went too, without a word. They stay in the box, the hint saying so."""
    fake.add({"content": "Paris."})
    await ask(qtbot, window, "Biggest city in France?")
    qtbot.keyClicks(window.composer.input, WRITING)
    rewrite(qtbot, window, "Second biggest city in France?")

    await window.delete_session("desktop:test")
    assert window.current_key != "desktop:test"
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "no longer in its chat" in window.composer.hint.text()
    kept = draft_path(bridge.core.home.state_dir, "chat")
    await until(lambda: kept.exists() and "Second biggest city" in kept.read_text(encoding="utf-8")
                and WRITING in kept.read_text(encoding="utf-8"),
                message="both kept on disk")


async def test_deleting_a_chat_left_mid_edit_asks_about_its_rewritten_question_too(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Delete on a chat left while its question was being rewritten (not the open one): the rewritten words went with
    the chat, and the question asked only about its messages. It names them now, so the person can cancel, go back
    to the chat and send them; the edit is still there then."""
    fake.add({"content": "Paris."})
    await ask(qtbot, window, "Biggest city in France?")
    rewrite(qtbot, window, "Second biggest city in France?")
    await leave_for_another_chat(window)
    await until(lambda: "desktop:test" in window.sidebar.session_keys(), message="the chat listed")

    window.sidebar.confirm_delete("desktop:test")
    box = window.sidebar.delete_box
    assert box is not None and box.isVisible()
    assert "rewritten question" in box.text() and "“Second biggest city in France?”" in box.text(), box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    await until(lambda: not box.isVisible())
    window.show_session("desktop:test")
    assert window.composer.input.toPlainText() == "Second biggest city in France?"
    assert "Editing your last message" in window.composer.hint.text()

    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)  # the edit ends unchanged: nothing unsent to mention
    await leave_for_another_chat(window)
    window.sidebar.confirm_delete("desktop:test")
    box = window.sidebar.delete_box
    assert box is not None and "rewritten" not in box.text(), box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()


async def test_a_command_typed_over_an_edit_runs_and_leaves_the_question_as_it_was(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """/stop (or /help) typed in the box while a question is edited: the chat stayed in edit mode with an empty box,
    and the next message sent took the question's place (/help itself did). A command is not the edit: it runs as
    typed, the edit ends as Esc ends it (the question stays as it was) and the message set aside comes back."""
    fake.add({"content": "Paris."}, {"content": "About 67 million."})
    await ask(qtbot, window, "Biggest city in France?")
    qtbot.keyClicks(window.composer.input, WRITING)
    for command in ("/stop", "/help"):
        hover(window, len(model_of(window).rows) - 1)
        hover(window, 0)
        qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
        assert "Editing" in window.composer.hint.text()
        window.composer.input.setPlainText(command)
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        assert "Editing" not in window.composer.hint.text()
        assert window.composer.input.toPlainText() == WRITING
    await until(lambda: "/status" in model_of(window).rows[-1].text, timeout=TURN, message="/help answered")
    assert [r.text for r in model_of(window).rows][:2] == ["Biggest city in France?", "Paris."]

    window.composer.input.setPlainText("And its population?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "About 67 million.")
    assert saved_texts(bridge)[:2] == ["Biggest city in France?", "Paris."]
    assert [r.text for r in model_of(window).rows][:2] == ["Biggest city in France?", "Paris."]


async def test_a_command_typed_over_an_edit_leaves_the_questions_files_with_it(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The files Edit put in the box are the edited question's: a command typed over the edit ends it, and they
    stayed in the box and went with the command (its bubble showed the question's file). A file attached after
    Edit is the person's own and goes with what they send."""
    notes, extra = tmp_path / "notes.txt", tmp_path / "extra.txt"
    notes.write_text("my notes\n")
    extra.write_text("more\n")
    window.composer.add_files([str(notes)])
    fake.add({"content": "Read them."})
    await ask(qtbot, window, "Read my notes?")
    click_edit(qtbot, window)
    assert window.composer.attachments == [str(notes)]
    window.composer.add_files([str(extra)])
    window.composer.input.setPlainText("/help")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: "/status" in model_of(window).rows[-1].text, timeout=TURN, message="/help answered")
    command = next(r for r in model_of(window).rows if r.text == "/help")
    assert list(command.media) == [str(extra)] and window.composer.attachments == []


async def test_a_file_attached_while_editing_keeps_the_hint_saying_it_is_an_edit(
        window: ChatWindow, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A file attached by hand (or dragged over the window and away) while a question is edited: the hint line went
    back to "Enter to send…", so nothing said any more that Enter replaces the question. It keeps saying so; once
    the edit is sent, the hint is the ordinary one again."""
    extra = tmp_path / "extra.txt"
    extra.write_text("more\n")
    fake.add({"content": "Paris."}, {"content": "Lyon is second."})
    await ask(qtbot, window, "Biggest city in France?")
    rewrite(qtbot, window, "Second biggest city in France?")
    window.composer.add_files([str(extra)])
    assert window.composer.attachments == [str(extra)]
    assert "Editing your last message" in window.composer.hint.text(), window.composer.hint.text()
    window.composer.show_drop_target(True)
    window.composer.show_drop_target(False)
    assert "Editing your last message" in window.composer.hint.text(), window.composer.hint.text()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await answered(window, "Lyon is second.")
    assert [r.text for r in model_of(window).rows] == ["Second biggest city in France?", "Lyon is second."]
    assert list(model_of(window).rows[0].media) == [str(extra)]
    assert "Editing" not in window.composer.hint.text(), window.composer.hint.text()


async def test_moving_from_message_to_message_keeps_every_line_in_view(window: ChatWindow, fake: FakeOpenAI,
                                                                       qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "echo: Are you there? A line as wide as the column needs."})
    await ask(qtbot, window, "Are you there?")
    hover(window, 1)  # over the answer's text: the selector takes that block
    placed = window.view.selector.placed
    assert placed is not None
    answer, lines = placed[1], placed[1].size().height()
    bubble = window.view.row_rect(0)
    hover(window, 0, QPointF(bubble.right() - 40, bubble.top() + 24))  # then over the short question's text
    assert window.view.selector.placed is not None and window.view.selector.placed[1] is not answer
    assert answer.size().height() == lines  # the answer was not re-wrapped to the question's narrow width


async def test_regenerated_answers_are_kept_to_flip_through_and_the_one_shown_is_history(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Call her Miso."}, {"content": "Call her Pepper."}, {"content": "Call her Luna."})
    await ask(qtbot, window, "a name for my cat?")
    actions = window.view.row_actions
    hover(window, 1)
    assert not actions.count_label.isVisible()  # one answer: nothing to flip through
    for answer in ("Call her Pepper.", "Call her Luna."):
        hover(window, 0)
        hover(window, 1)
        qtbot.mouseClick(actions.regenerate_button, Qt.MouseButton.LeftButton)
        await until(lambda a=answer: not model_of(window).busy and model_of(window).rows[-1].text == a,  # type: ignore[misc]
                    timeout=TURN)

    def counted() -> str:  # what the last answer's toolbar says, hovered afresh
        hover(window, 0)
        hover(window, 1)
        return actions.count_label.text() if actions.count_label.isVisible() else ""
    await until(lambda: counted() == "3/3")
    assert not actions.next_button.isEnabled()
    window.grab().save("/tmp/alts-3of3.png")
    for shown, answer in (("2/3", "Call her Pepper."), ("1/3", "Call her Miso.")):
        qtbot.mouseClick(actions.previous_button, Qt.MouseButton.LeftButton)  # ‹
        await until(lambda a=answer: model_of(window).rows[-1].text == a)  # type: ignore[misc]
        hover(window, 0)
        hover(window, 1)
        assert actions.count_label.text() == shown
    assert not actions.previous_button.isEnabled()
    window.grab().save("/tmp/alts-1of3.png")
    assert [r.text for r in model_of(window).rows] == ["a name for my cat?", "Call her Miso."]

    reopened = ChatWindow(bridge)  # the chat opened afresh shows where the person left it
    qtbot.addWidget(reopened)
    reopened.resize(900, 640)
    reopened.show()
    reopened.show_session("desktop:test")
    await until(lambda: reopened.models["desktop:test"].loaded)
    hover(reopened, 0)
    hover(reopened, 1)
    assert reopened.view.row_actions.count_label.text() == "1/3"
    assert reopened.models["desktop:test"].rows[-1].text == "Call her Miso."
    reopened.close()

    fake.add({"content": "Then Pepper."})
    await ask(qtbot, window, "and a second cat?")
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "Call her Miso." in sent and "Call her Pepper." not in sent and "Call her Luna." not in sent
    hover(window, 1)  # an earlier answer: it keeps its three, but does not flip
    assert not actions.count_label.isVisible()


def reopened(bridge: CoreBridge, qtbot, key: str) -> ChatWindow:  # type: ignore[no-untyped-def]
    """A new window on the chat, its rows read from the saved file as after a restart."""
    window = ChatWindow(bridge)
    qtbot.addWidget(window)
    window.resize(900, 640)
    window.show()
    window.show_session(key)
    return window


async def test_regenerate_and_edit_keep_the_names_attachments_were_sent_by(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A pasted text and a file named with spaces and parentheses are kept in the workspace under plainer names;
    asked again (Regenerate, live and after a restart, then Edit) the message still names them as they were sent,
    live and read again, the model is told those names, and the workspace holds one copy of each."""
    paste_text(qtbot, window, "x\n" * 200)
    await until(lambda: window.composer.attachments, message="the paste attached")
    report = tmp_path / "Q3 report (final).pdf"
    report.write_bytes(pdf(["Revenue rose 12%."]))
    window.composer.add_files([str(report)])
    pasted = Path(window.composer.attachments[0]).name
    sent = [f"▪ {pasted}", "▪ Q3 report (final).pdf"]
    fake.add({"content": "Revenue rose."}, {"content": "It rose 12%."}, {"content": "By 12%."},
             {"content": "Twelve percent."})
    await ask(qtbot, window, "what changed?")
    assert chip_names(window, 0) == sent

    hover(window, 1)
    qtbot.mouseClick(window.view.row_actions.regenerate_button, Qt.MouseButton.LeftButton)  # the files as sent
    await answered(window, "It rose 12%.")

    again = reopened(bridge, qtbot, "desktop:test")  # its files are now the workspace copies
    await until(lambda: model_of(again).loaded and chip_names(again, 0) == sent, message="read again")
    hover(again, 1)
    qtbot.mouseClick(again.view.row_actions.regenerate_button, Qt.MouseButton.LeftButton)
    await answered(again, "By 12%.")
    assert chip_names(again, 0) == sent
    said = last_user_text(fake.requests[-1])
    assert "“Q3 report (final).pdf”" in said and f"“{pasted}”" in said  # the model hears the same names

    third = reopened(bridge, qtbot, "desktop:test")
    await until(lambda: model_of(third).loaded, message="read again")
    assert chip_names(third, 0) == sent
    click_edit(qtbot, third)
    chips = [third.composer.chips.itemAt(i).widget() for i in range(2)]
    await until(lambda: [c.name.text() for c in chips] == [pasted, "Q3 report (final).pdf · 1 page"],
                message="the message box names the files as they were sent")
    third.grab().save(str(SHOTS / "edit-with-attachments.png"))
    third.composer.input.setPlainText("what changed, in percent?")
    qtbot.keyClick(third.composer.input, Qt.Key.Key_Return)
    await answered(third, "Twelve percent.")
    assert chip_names(third, 0) == sent
    third.grab().save(str(SHOTS / "edited-with-attachments.png"))

    last = reopened(bridge, qtbot, "desktop:test")
    await until(lambda: model_of(last).loaded, message="read again")
    assert chip_names(last, 0) == sent and [r.text for r in model_of(last).rows] == [
        "what changed, in percent?", "Twelve percent."]
    copies = sorted(p.name for p in (bridge.core.workspace / "attachments" / "desktop_test").iterdir())
    assert copies == ["Pasted_text_" + pasted.removeprefix("Pasted text ").replace(" ", "_"), "Q3_report_final_.pdf"]

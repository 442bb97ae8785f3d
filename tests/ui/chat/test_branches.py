"""Branch from here, and Edit on an earlier question, through the real chat window and a scripted model: the
new chat shares the history up to that point (read from the parent's file, not copied), is listed under its
parent, and the model of a branch hears the shared history and nothing said after it; the original chat stays
as it was."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from PySide6.QtCore import Qt

from desktop.conversation.transcript import Kind
from desktop.session.session import SessionInfo, SessionStore
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.sidebar import DEPTH_ROLE, SessionList
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.locked import locked
from tests.pdfs import pdf
from tests.ui.chat.test_composer import chip_names
from tests.ui.chat.test_row_actions import (
    WRITING,
    ask,
    asked_again_while_it_runs,
    click_edit,
    hover,
    leave_for_another_chat,
    offered,
    reopened,
    rewrite,
)
from tests.ui.chat.test_window import TURN, model_of, saved_messages, type_and_send
from tests.ui.conftest import until

PARENT = "desktop:test"
SHOTS = Path("/tmp/branch-shots")


def texts(window: ChatWindow) -> list[str]:
    return [r.text for r in model_of(window).rows]


def depth_of(window: ChatWindow, key: str) -> int:
    return depth_of_item(window.sidebar, key)


async def three_turns(qtbot, window: ChatWindow, fake: FakeOpenAI) -> None:  # type: ignore[no-untyped-def]
    fake.add({"content": "Alpaca answer."}, {"content": "Bison answer."}, {"content": "Camel answer."})
    for question in ("alpaca?", "bison?", "camel?"):
        await ask(qtbot, window, question)


async def test_branch_from_an_answer_shares_the_history_up_to_it(window: ChatWindow, bridge: CoreBridge,
                                                                 fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    await three_turns(qtbot, window, fake)
    parent_file = bridge.core.sessions.path_for(PARENT).read_bytes()
    hover(window, 3)  # the second answer, an earlier one
    assert offered(window) == ["Copy", "Branch"]
    qtbot.mouseClick(window.view.row_actions.branch_button, Qt.MouseButton.LeftButton)
    await until(lambda: window.current_key != PARENT and model_of(window).loaded, timeout=10)
    branch = window.current_key
    assert texts(window) == ["alpaca?", "Alpaca answer.", "bison?", "Bison answer."]
    await until(lambda: window.sidebar.session_keys()[:2] == [PARENT, branch], timeout=5)
    assert depth_of(window, branch) == 1 and depth_of(window, PARENT) == 0  # listed under its parent
    assert "Branch" in window.sidebar.list.item(2).data(Qt.ItemDataRole.UserRole + 2)

    fake.add({"content": "Dromedary answer."})
    type_and_send(qtbot, window, "dromedary?")
    await until(lambda: not model_of(window).busy and texts(window)[-1] == "Dromedary answer.", timeout=TURN)
    sent = json.dumps(fake.requests[-1]["messages"])
    assert "Bison answer." in sent and "alpaca?" in sent and "camel?" not in sent and "Camel answer." not in sent
    assert [m["content"] for m in saved_messages(bridge, branch)] == ["dromedary?", "Dromedary answer."]  # once
    assert bridge.core.sessions.path_for(PARENT).read_bytes() == parent_file  # the original stays untouched

    SHOTS.mkdir(exist_ok=True)
    window.grab().save(str(SHOTS / "branch.png"))
    await window.delete_session(PARENT)  # the branch keeps the history it shared
    assert window.current_key == branch and depth_of(window, branch) == 0
    restarted = SessionStore(bridge.core.sessions.directory)
    assert [m["content"] for m in (await restarted.load(branch)).messages] == [
        "alpaca?", "Alpaca answer.", "bison?", "Bison answer.", "dromedary?", "Dromedary answer."]


async def test_editing_an_earlier_question_asks_it_in_a_branch(window: ChatWindow, bridge: CoreBridge,
                                                               fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    await three_turns(qtbot, window, fake)
    parent_file = bridge.core.sessions.path_for(PARENT).read_bytes()
    hover(window, 2)  # "bison?", not the last question
    assert offered(window) == ["Copy", "Edit", "Branch"]
    SHOTS.mkdir(exist_ok=True)
    window.grab().save(str(SHOTS / "earlier-question-actions.png"))
    qtbot.mouseClick(window.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
    assert window.composer.input.toPlainText() == "bison?" and "new branch" in window.composer.hint.text()
    window.composer.input.setPlainText("yak?")
    fake.add({"content": "Yak answer."})
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: window.current_key != PARENT and texts(window)[-1:] == ["Yak answer."], timeout=TURN)
    branch = window.current_key
    assert texts(window) == ["alpaca?", "Alpaca answer.", "yak?", "Yak answer."]

    request = fake.requests[-1]
    sent = json.dumps(request["messages"])
    assert last_user_text(request) == "yak?" and "alpaca?" in sent and "Alpaca answer." in sent
    assert "bison?" not in sent and "Bison answer." not in sent and "camel?" not in sent
    assert bridge.core.sessions.path_for(PARENT).read_bytes() == parent_file
    await until(lambda: branch in window.sidebar.session_keys(), timeout=5)
    assert depth_of(window, branch) == 1

    window.show_session(PARENT)  # the original, as it was
    assert texts(window) == ["alpaca?", "Alpaca answer.", "bison?", "Bison answer.", "camel?", "Camel answer."]


async def test_an_earlier_question_edited_keeps_its_files_names_in_the_branch(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Read from the chat's file, the question's file is its workspace copy (Q3_report_final_.pdf); edited, it is
    asked in a branch under the name it was sent by, live and when the branch is read again."""
    report = tmp_path / "Q3 report (final).pdf"
    report.write_bytes(pdf(["Revenue rose 12%."]))
    window.composer.add_files([str(report)])
    fake.add({"content": "Revenue rose."}, {"content": "Hiring."}, {"content": "By 12%."})
    await ask(qtbot, window, "what changed?")
    await ask(qtbot, window, "what comes next?")

    again = reopened(bridge, qtbot, PARENT)
    await until(lambda: model_of(again).loaded, message="read again")
    hover(again, 1)
    hover(again, 0)
    qtbot.mouseClick(again.view.row_actions.edit_button, Qt.MouseButton.LeftButton)
    again.composer.input.setPlainText("what changed, in percent?")
    qtbot.keyClick(again.composer.input, Qt.Key.Key_Return)
    await until(lambda: again.current_key != PARENT and texts(again)[-1:] == ["By 12%."], timeout=TURN)
    assert chip_names(again, 0) == ["▪ Q3 report (final).pdf"]
    assert "“Q3 report (final).pdf”" in last_user_text(fake.requests[-1])
    branch = reopened(bridge, qtbot, again.current_key)
    await until(lambda: model_of(branch).loaded, message="the branch read again")
    assert chip_names(branch, 0) == ["▪ Q3 report (final).pdf"]


def test_branches_are_listed_under_their_chat_unless_pinned_apart(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Newest first, except that a branch follows its chat (a branch of a branch one step further in); a pinned
    branch of a chat that is not pinned stays at the top with the pinned ones."""
    now = datetime.now().astimezone()

    def chat(key: str, minutes: int, branch_of: str = "", pinned: bool = False) -> SessionInfo:
        return SessionInfo(key, key.title(), (now - timedelta(minutes=minutes)).isoformat(), 2, pinned, branch_of)

    sidebar = SessionList()
    qtbot.addWidget(sidebar)
    sidebar.set_sessions([chat("b:deeper", 1, "b:branch"), chat("c:other", 2), chat("b:branch", 3, "a:root"),
                          chat("p:pinned", 4, "a:root", pinned=True), chat("a:root", 9)], "", set())
    assert sidebar.session_keys() == ["p:pinned", "c:other", "a:root", "b:branch", "b:deeper"]
    assert [depth_of_item(sidebar, key) for key in sidebar.session_keys()] == [0, 0, 0, 1, 2]
    assert sidebar.headers() == ["Pinned", "Today"]
    SHOTS.mkdir(exist_ok=True)
    sidebar.resize(260, 420)
    sidebar.grab().save(str(SHOTS / "sidebar.png"))


def depth_of_item(sidebar: SessionList, key: str) -> int:
    item = sidebar._item(key)
    assert item is not None
    return int(item.data(DEPTH_ROLE) or 0)


async def test_branch_at_a_question_sent_while_the_turn_ran_finds_its_place(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A question sent while the turn ran shows where it was sent, but the saved chat has it where the turn took it
    in, a row further on: Branch there found another row at its place and said the message was not saved as shown.
    It is found by its words nearest its place."""
    await asked_again_while_it_runs(qtbot, window, fake, "alpaca?", "and bison?", "Alpaca and bison answer.")
    hover(window, 3)
    hover(window, 1)  # and bison?, shown before the turn's step
    qtbot.mouseClick(window.view.row_actions.branch_button, Qt.MouseButton.LeftButton)
    await until(lambda: window.current_key != PARENT and model_of(window).loaded, timeout=10,
                message="the branch opened")
    assert [r.text for r in model_of(window).rows if r.kind is not Kind.TOOL] == ["alpaca?", "and bison?"]


async def test_an_edit_whose_branch_cannot_be_saved_waits_in_its_own_chat_when_the_person_left_it(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Enter on an edited earlier question, then straight to another chat; the branch cannot be written (the chats
    folder made read-only). The rewritten words were put back into the chat then on screen, as an edit of a
    question it does not have. They wait in the chat they were written in, as its edit, and Enter there branches
    once the folder can be written again; the other chat's box gets back what was being written."""
    await three_turns(qtbot, window, fake)
    qtbot.keyClicks(window.composer.input, WRITING)
    click_edit(qtbot, window, 2)  # "bison?", not the last question
    window.composer.input.setPlainText("yak?")
    with locked(bridge.core.sessions.path_for(PARENT).parent):
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        window.show_session("desktop:other")
        await until(lambda: "could not be saved" in window.composer.hint.text() or window.editing.row is not None,
                    timeout=10, message="the branch failing")
    assert window.current_key == "desktop:other"
    assert window.composer.input.toPlainText() == WRITING and window.editing.row is None
    said = window.composer.hint.text()
    assert "waits in the chat you edited it in: Enter there tries again" in said, said

    window.show_session(PARENT)
    await until(lambda: model_of(window).loaded, message="the chat shown again")
    assert window.composer.input.toPlainText() == "yak?" and "new branch" in window.composer.hint.text()
    fake.add({"content": "Yak answer."})
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: window.current_key not in (PARENT, "desktop:other") and texts(window)[-1:] == ["Yak answer."],
                timeout=TURN, message="the branch answered")
    assert texts(window) == ["alpaca?", "Alpaca answer.", "yak?", "Yak answer."]
    assert window.composer.input.toPlainText() == WRITING


async def test_words_typed_in_the_other_chat_stay_when_a_branch_left_behind_fails(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Enter on an edited earlier question, straight to another chat, a few words typed there; then the branch
    fails. What was being written before Edit came back in place of those words, which were lost: now it comes
    back before them."""
    await three_turns(qtbot, window, fake)
    qtbot.keyClicks(window.composer.input, WRITING)
    click_edit(qtbot, window, 2)
    window.composer.input.setPlainText("yak?")
    with locked(bridge.core.sessions.path_for(PARENT).parent):
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        window.show_session("desktop:other")
        qtbot.keyClicks(window.composer.input, "typed in the other chat")
        await until(lambda: "waits in the chat" in window.composer.hint.text(), timeout=10,
                    message="the branch failing")
    assert window.composer.input.toPlainText() == f"{WRITING}\n\ntyped in the other chat"


async def test_going_during_a_branchs_save_to_a_chat_left_mid_edit_loses_no_words(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A message being written, Edit on an earlier question, Enter, a few more words typed, and straight to a chat
    left mid-edit, before the branch is saved (here it cannot be: the chats folder made read-only). Taking up that
    chat's edit set aside the box in place of the message written before Edit, which was lost. Now both that
    message and the words typed meanwhile come back when the other chat's edit ends."""
    await leave_for_another_chat(window)
    fake.add({"content": "Other answer."})
    await ask(qtbot, window, "other?")
    rewrite(qtbot, window, "other, rewritten?")
    window.show_session(PARENT)
    await until(lambda: model_of(window).loaded, message="the chat shown again")
    await three_turns(qtbot, window, fake)
    qtbot.keyClicks(window.composer.input, WRITING)
    rewrite(qtbot, window, "yak?", 2)  # "bison?", not the last question
    with locked(bridge.core.sessions.path_for(PARENT).parent):
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        qtbot.keyClicks(window.composer.input, "and more")
        window.show_session("desktop:other")
        assert window.composer.input.toPlainText() == "other, rewritten?"
        await until(lambda: "could not be saved" in window.composer.hint.text(), timeout=10,
                    message="the branch failing")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Escape)  # the other chat's edit ends
    assert window.composer.input.toPlainText() == f"{WRITING}\n\nand more"


async def test_an_edit_whose_branch_cannot_be_saved_keeps_the_files_attached_during_the_edit(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """An earlier question edited, a file attached to it, Enter; the branch cannot be written (the chats folder made
    read-only). The rewritten words came back to the box, but with the question's files as they were before the
    edit: the file attached was gone; and the hint said only the keys of an edit, not why nothing was sent. Now the
    box holds the edit as it was sent, the hint says why, and Enter sends it with the file."""
    await three_turns(qtbot, window, fake)
    notes = tmp_path / "yak notes.txt"
    notes.write_text("Yaks live in the Himalaya.\n")
    rewrite(qtbot, window, "yak?", 2)  # "bison?", not the last question
    window.composer.add_files([str(notes)])
    with locked(bridge.core.sessions.path_for(PARENT).parent):
        qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
        await until(lambda: window.editing.row is not None, timeout=10, message="the branch failing")
    assert window.current_key == PARENT
    assert window.composer.input.toPlainText() == "yak?" and window.composer.attachments == [str(notes)]
    said = window.composer.hint.text()  # why, not only the keys of an edit
    assert said.startswith("The branch could not be saved: ") and "Enter tries again" in said, said

    fake.add({"content": "Yak answer."})
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    await until(lambda: window.current_key != PARENT and texts(window)[-1:] == ["Yak answer."], timeout=TURN,
                message="the branch answered")
    assert chip_names(window, 2) == ["▪ yak notes.txt"]

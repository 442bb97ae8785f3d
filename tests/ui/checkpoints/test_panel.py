"""The chat window's strip of turns that changed files, with real turns of the scripted model in the real
workspace: "N files changed" with the files and each one's diff, Undo these changes (which puts the files back), and files
edited since or memory files, which stop the undo until the person chooses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from desktop.checkpoints import Checkpoints
from desktop.checkpoints.service import UndoResult
from desktop.checkpoints.wording import looked_message, reason_of
from desktop.conversation.transcript import Kind
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.checkpoints.panel import ChangesPanel, TurnRow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.locked import locked
from tests.pipes import watched_pipe
from tests.ui.conftest import until

TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
SHOTS = os.environ.get("CHECKPOINTS_SCREENSHOTS")  # a folder to save the panel's picture in, to look at it


async def window_with_panel(bridge: CoreBridge, qtbot: Any) -> ChatWindow:
    made = ChatWindow(bridge, [lambda: ChangesPanel(bridge.core.get(Checkpoints), bridge)])
    qtbot.addWidget(made)
    made.resize(900, 640)
    made.show()
    made.show_session("desktop:test")
    await until(lambda: made.models["desktop:test"].loaded)
    return made


def panel_of(window: ChatWindow) -> ChangesPanel:
    found = window.findChild(ChangesPanel)
    assert found is not None
    return found


async def changing_turn(bridge: CoreBridge, window: ChatWindow, fake: FakeOpenAI, command: str) -> TurnRow:
    panel = panel_of(window)
    before = set(panel.rows)
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}, {"content": "Done."})
    bridge.send(window.current_key, "tidy up my notes")
    await until(lambda: set(panel.rows) - before, timeout=TURN)
    (new,) = set(panel.rows) - before
    return panel.rows[new]


async def test_a_turns_changes_are_listed_and_undone_from_the_chat(bridge: CoreBridge, fake: FakeOpenAI,
                                                                   qtbot: Any) -> None:
    window = await window_with_panel(bridge, qtbot)
    panel = panel_of(window)
    assert not panel.isVisible()  # nothing changed in this chat yet
    ws = bridge.core.workspace
    (ws / "notes.md").write_text("my notes\n")
    (ws / "old.txt").write_text("old\n")
    row = await changing_turn(bridge, window, fake,
                              "echo more >> notes.md && mkdir -p out && echo hi > out/summary.txt && rm old.txt")
    assert panel.isVisible()
    assert row.count.text() == "3 files changed" and row.asked.text() == "by “tidy up my notes”"
    qtbot.mouseClick(row.toggle, Qt.MouseButton.LeftButton)
    assert row.files.isVisible()
    assert [e.title for e in row.entries] == ["changed: notes.md", "deleted: old.txt", "new: out/summary.txt"]
    if SHOTS:
        panel.grab().save(str(Path(SHOTS) / "checkpoints-panel.png"))
        window.grab().save(str(Path(SHOTS) / "checkpoints-window.png"))

    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: row.outcome.isVisible(), timeout=TURN)
    assert row.undo_button.text() == "Undone" and not row.undo_button.isEnabled()
    assert "removed `out/summary.txt`" in row.outcome.text()
    assert (ws / "notes.md").read_text() == "my notes\n" and (ws / "old.txt").read_text() == "old\n"
    assert not (ws / "out").exists()


async def test_each_file_unfolds_to_what_the_turn_changed_in_it(bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any,
                                                                 tmp_path: Path) -> None:
    """The diff of that turn, from the kept copies: still the turn's own after the file changed again; a
    picture or another binary file says so with its sizes."""
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    (ws / "notes.md").write_text("milk\neggs\nbread\n")
    (ws / "logo.bin").write_bytes(bytes(10 * 1024))
    fake.add({"tool_calls": [
        {"name": "edit_file", "arguments": {"path": "notes.md", "old_text": "eggs", "new_text": "butter"}},
        {"name": "exec", "arguments": {"command": "head -c 12288 /dev/zero > logo.bin && printf 'a\\0b' > new.dat"}}]},
        {"content": "Done."})
    panel = panel_of(window)
    bridge.send(window.current_key, "tidy up my notes")
    await until(lambda: panel.rows, timeout=TURN)
    (row,) = panel.rows.values()
    (ws / "notes.md").write_text("changed again since\n")
    qtbot.mouseClick(row.toggle, Qt.MouseButton.LeftButton)
    entries = {e.change.path: e for e in row.entries}
    assert list(entries) == ["logo.bin", "new.dat", "notes.md"]
    notes = entries["notes.md"]
    assert notes.diff is None and not notes.note.isVisible()  # folded until asked
    qtbot.mouseClick(notes.button, Qt.MouseButton.LeftButton)
    await until(lambda: notes.diff is not None, timeout=TURN, message="the diff of notes.md")
    assert notes.diff is not None and notes.diff.isVisible()
    assert notes.diff.toPlainText().splitlines() == [
        "--- a/notes.md", "+++ b/notes.md", "@@ -1,3 +1,3 @@", " milk", "-eggs", "+butter", " bread"]
    tints = {t.cursor.block().text(): t.format.background().color().name() for t in notes.diff.extraSelections()}
    assert list(tints) == ["-eggs", "+butter"] and tints["-eggs"] != tints["+butter"]  # red, green
    for path, said in (("logo.bin", "binary file, 10 KB → 12 KB"), ("new.dat", "binary file, 3 bytes")):
        entry = entries[path]
        qtbot.mouseClick(entry.button, Qt.MouseButton.LeftButton)
        await until(lambda entry=entry, said=said: entry.note.text() == said, timeout=TURN, message=said)
        assert entry.note.isVisible() and entry.diff is None
    window.grab().save(str(tmp_path / "strip-diff.png"))
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / "checkpoints-diff.png"))
    qtbot.mouseClick(notes.button, Qt.MouseButton.LeftButton)
    assert not notes.diff.isVisible()  # folds again


async def test_an_undo_leaves_a_line_in_the_chat_that_stays(bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any,
                                                             tmp_path: Path) -> None:
    """From the strip's button or typed, an undo says in the transcript what it put back, in the quiet style of
    the chat's other notices, and the line is still there when the chat is opened again (or after a restart:
    it is read from the chat's file); the model is told too."""
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    (ws / "notes.md").write_text("my notes\n")
    (ws / "old.txt").write_text("old\n")
    row = await changing_turn(bridge, window, fake, "echo more >> notes.md && echo a > a.txt && rm old.txt")
    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    said = "Undid the changes of “tidy up my notes”: 1 file restored, 1 removed, 1 brought back"
    rows = window.models["desktop:test"].rows
    await until(lambda: rows[-1].text == said, timeout=TURN, message="the undo's line in the chat")
    assert rows[-1].kind is Kind.NOTICE

    await changing_turn(bridge, window, fake, "echo draft > plan.md")
    bridge.send(window.current_key, "/undo")
    typed = "Undid the changes of “tidy up my notes”: 1 file removed"
    await until(lambda: any(r.text == typed for r in rows), timeout=TURN, message="the typed undo's line")
    await until(lambda: not window.models["desktop:test"].busy, timeout=TURN)
    window.grab().save(str(tmp_path / "undo-line.png"))

    reopened = ChatWindow(bridge)
    qtbot.addWidget(reopened)
    reopened.show()
    reopened.show_session("desktop:test")
    await until(lambda: reopened.models["desktop:test"].loaded)
    notices = [r.text for r in reopened.models["desktop:test"].rows if r.kind is Kind.NOTICE]
    assert notices == [said, typed]
    fake.add({"content": "Understood."})
    bridge.send(window.current_key, "what is left?")
    await until(lambda: fake.requests and "what is left?" in last_user_text(fake.requests[-1]), timeout=TURN)
    told = [m["content"] for m in fake.requests[-1]["messages"] if m["role"] == "user"]
    assert any(text.startswith(f"[{typed}]") and "removed `plan.md`" in text for text in told)


async def test_a_typed_undo_is_shown_on_the_turns_row(bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any) -> None:
    """The row of a turn undone by a typed /undo no longer offers an undo that can only fail (found walking it)."""
    window = await window_with_panel(bridge, qtbot)
    row = await changing_turn(bridge, window, fake, "echo draft > plan.md")
    bridge.send(window.current_key, "/undo")
    await until(lambda: row.undo_button.text() == "Undone", timeout=TURN)
    assert not row.undo_button.isEnabled() and not (bridge.core.workspace / "plan.md").exists()


async def test_a_file_edited_since_or_a_memory_file_asks_and_undo_the_rest_leaves_them(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any, tmp_path: Path) -> None:
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    memory = (ws / "memory/MEMORY.md").read_text()
    fake.add({"tool_calls": [
        {"name": "exec", "arguments": {"command": "echo draft > plan.md && echo made > other.txt"}},
        {"name": "edit_file", "arguments": {"path": "memory/MEMORY.md", "old_text": "# Long-term memory",
                                            "new_text": "# Long-term memory\n\n- Likes tea."}}]},
        {"content": "Done."})
    panel = panel_of(window)
    bridge.send(window.current_key, "plan my week")
    await until(lambda: panel.rows, timeout=TURN)
    (row,) = panel.rows.values()
    (ws / "plan.md").write_text("draft, then my edit\n")

    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: row.choice is not None, timeout=TURN, message="the choice")
    choice = row.choice
    assert choice is not None and choice.isVisible() and not row.outcome.isVisible()
    assert choice.heading.text() == "Undoing would overwrite these 2 files:"
    assert [line.text() for line in choice.listed] == [
        "memory/MEMORY.md  ·  a memory file: never put back without asking", "plan.md  ·  changed since this turn"]
    assert [b.text() for b in (choice.cancel, choice.anyway, choice.rest)] == ["Cancel", "Undo anyway",
                                                                                "Undo the rest"]
    assert (ws / "other.txt").exists() and (ws / "plan.md").read_text() == "draft, then my edit\n"
    panel.grab().save(str(tmp_path / "choice.png"))
    if SHOTS:
        panel.grab().save(str(Path(SHOTS) / "checkpoints-conflict.png"))

    qtbot.mouseClick(choice.cancel, Qt.MouseButton.LeftButton)
    assert row.choice is None and row.undo_button.isEnabled()
    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: row.choice is not None, timeout=TURN, message="the choice again")
    assert row.choice is not None
    qtbot.mouseClick(row.choice.rest, Qt.MouseButton.LeftButton)
    await until(lambda: row.outcome.isVisible(), timeout=TURN)
    assert row.choice is None and row.undo_button.text() == "Undone"
    assert "removed `other.txt`" in row.outcome.text() and "left `plan.md` as it is now" in row.outcome.text()
    assert not (ws / "other.txt").exists()
    assert (ws / "plan.md").read_text() == "draft, then my edit\n"
    assert "Likes tea" in (ws / "memory/MEMORY.md").read_text() != memory


async def test_undo_anyway_overwrites_only_what_was_listed_and_keeps_a_copy(bridge: CoreBridge, fake: FakeOpenAI,
                                                                           qtbot: Any) -> None:
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    (ws / "plan.md").write_text("v1\n")
    row = await changing_turn(bridge, window, fake, "echo v2 > plan.md && echo made > other.txt")
    (ws / "plan.md").write_text("v2, then my edit\n")
    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: row.choice is not None, timeout=TURN, message="the choice")
    assert row.choice is not None and [c.path for c in row.choice.conflicts] == ["plan.md"]

    (ws / "other.txt").write_text("made, then mine too\n")  # after the list was shown: not overwritten unasked
    qtbot.mouseClick(row.choice.anyway, Qt.MouseButton.LeftButton)
    await until(lambda: row.choice is not None and len(row.choice.conflicts) == 2, timeout=TURN,
                message="the choice with the file changed meanwhile")
    assert (ws / "other.txt").read_text() == "made, then mine too\n"
    assert row.choice is not None
    qtbot.mouseClick(row.choice.anyway, Qt.MouseButton.LeftButton)
    await until(lambda: row.outcome.isVisible(), timeout=TURN)
    assert (ws / "plan.md").read_text() == "v1\n" and not (ws / "other.txt").exists()
    (kept,) = (bridge.core.home.data_dir / "checkpoints" / "overwritten").iterdir()
    assert (kept / "plan.md").read_text() == "v2, then my edit\n"
    assert (kept / "other.txt").read_text() == "made, then mine too\n"
    assert str(kept) in row.outcome.text() and row.outcome.property("stopped") is False
    if SHOTS:
        panel_of(window).grab().save(str(Path(SHOTS) / "checkpoints-anyway.png"))


async def test_names_and_link_texts_a_command_chose_are_shown_as_words_not_as_markup(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any, tmp_path: Path) -> None:
    """A sandboxed command chooses the workspace's names and its links' texts: folders nested to spell an HTML
    picture (<img src="/home/you/..."> is three folders), a Markdown one after a backtick, a link whose text is a
    picture. The strip showed them in labels that read such words as markup, and Qt read the file the picture
    named as the label was laid out, outside the workspace: a named pipe froze the app for good. A file's note,
    the files that stop an undo and what an undo did now show them as the words they are."""
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    with watched_pipe(tmp_path / "pipe") as opened:
        html_folder, md_folder = f'<img src="{tmp_path}/pipe">', f"a`![x]({tmp_path}/pipe)`b"
        row = await changing_turn(bridge, window, fake, (
            f"mkdir -p '{html_folder}' '{md_folder}' && echo one > '{html_folder}/plan.md' && "
            f"echo two > '{md_folder}/notes.md' && ln -s '<img src=\"{tmp_path}/pipe\">' pic"))
        qtbot.mouseClick(row.toggle, Qt.MouseButton.LeftButton)
        link = next(e for e in row.entries if e.change.path == "pic")
        qtbot.mouseClick(link.button, Qt.MouseButton.LeftButton)
        await until(lambda: link.note.text() == f'nothing → a link to <img src="{tmp_path}/pipe">', timeout=TURN)
        (ws / html_folder / "plan.md").write_text("mine\n")  # edited since: the undo asks, naming it
        qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
        await until(lambda: row.choice is not None, timeout=TURN, message="the choice")
        assert row.choice is not None
        assert [line.text() for line in row.choice.listed] == [f"{html_folder}/plan.md  ·  changed since this turn"]
        window.grab()  # laid out and painted
        qtbot.mouseClick(row.choice.rest, Qt.MouseButton.LeftButton)
        await until(lambda: row.outcome.isVisible(), timeout=TURN)
        window.grab()
        await until(lambda: not (ws / md_folder / "notes.md").exists(), timeout=TURN)
    assert not opened, "a label read the pipe a name in the workspace pointed at"


async def test_an_undo_that_failed_on_a_name_a_command_chose_shows_the_name_as_words(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any) -> None:
    """The look before an undo fails on a folder of the workspace (one the person may not read, say), and the
    strip says which: a command chose that name, and it went into the strip's Markdown as it was, shown as bold
    text or a link instead of the name. (As root no folder can be made unreadable, so the error is the one the
    walk raises for it, handed to the strip's wording.)"""
    window = await window_with_panel(bridge, qtbot)
    row = await changing_turn(bridge, window, fake, "echo one > a.txt")
    name = "**notes** [x](https://example.org) <b>y</b>"
    row.show_outcome(UndoResult(looked_message(reason_of(PermissionError(13, "Permission denied", name)))))
    shown = QTextDocument()
    shown.setMarkdown(row.outcome.text())
    assert f"(Permission denied: {name})" in shown.toPlainText(), shown.toPlainText()


async def test_lowering_the_cap_in_settings_says_undo_is_off_in_the_chat(bridge: CoreBridge, fake: FakeOpenAI,
                                                                         qtbot: Any) -> None:
    from desktop.ui.checkpoints import _settings_group
    from desktop.ui.settings import SettingsWindow

    window = await window_with_panel(bridge, qtbot)
    panel = panel_of(window)
    (bridge.core.workspace / "big.bin").write_bytes(os.urandom(3 * 2**20))
    settings = SettingsWindow(bridge, [("Checkpoints", "", _settings_group)])
    qtbot.addWidget(settings)
    await settings.reload()  # not shown: showing reads config.yaml too, and a read landing after setValue undid it
    limit = settings.rows["checkpoints.max_workspace_mb"].widget
    assert limit.value() == 1024 and limit.suffix() == " MB"
    limit.setValue(2)
    settings.status.clear()
    settings.save_button.click()
    await until(lambda: panel.paused.isVisible(), timeout=TURN)
    assert panel.isVisible()
    assert panel.paused.text().startswith("Undo is off: the workspace holds 3 MB, over checkpoints.max_workspace_mb")

    (bridge.core.workspace / "big.bin").unlink()
    settings.rows["checkpoints.max_workspace_mb"].widget.setValue(3)
    settings.save_button.click()
    await until(lambda: not panel.paused.isVisible(), timeout=TURN)
    assert not panel.isVisible()  # no turn of this chat changed files


async def test_an_undo_that_cannot_put_a_file_back_says_which_and_why_and_can_be_done_again(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any) -> None:
    """The turn deleted a file from a folder the person then made read-only: putting it back fails. The strip says
    which file could not be put back and why, instead of staying on "Undoing…"; once the folder is writable again,
    Undo these changes finishes the job."""
    window = await window_with_panel(bridge, qtbot)
    ws = bridge.core.workspace
    (ws / "locked").mkdir()
    (ws / "locked/a.txt").write_text("mine\n")
    (ws / "b.txt").write_text("before\n")
    row = await changing_turn(bridge, window, fake, "rm locked/a.txt && echo after > b.txt")
    with locked(ws / "locked"):
        qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
        await until(lambda: row.outcome.isVisible(), timeout=TURN, message="the undo's outcome")
    said = row.outcome.text()
    assert "`locked/a.txt` could not be put back" in said and ("not permitted" in said or "denied" in said), said
    assert "`b.txt` is as before the turn again" in said, said
    assert row.undo_button.text() == "Undo these changes" and row.undo_button.isEnabled()
    assert (ws / "b.txt").read_text() == "before\n" and not (ws / "locked/a.txt").exists()
    assert os.listdir(ws / "locked") == []  # no half-written copy left in it

    qtbot.mouseClick(row.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: row.undo_button.text() == "Undone", timeout=TURN, message="the second undo")
    assert (ws / "locked/a.txt").read_text() == "mine\n" and (ws / "b.txt").read_text() == "before\n"

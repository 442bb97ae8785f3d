"""The memory window driven like a user would: edit and save a memory file, see outside edits, restore a
change, search the history, manage sessions; and the Dream timer's notification."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDate, Qt, QTimer
from PySide6.QtWidgets import QMessageBox

from desktop.kernel import taskset
from desktop.memory import Memory
from desktop.ui.bridge import CoreBridge
from desktop.ui.memory.window import MemoryWindow
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip, until

SHOTS = os.environ.get("MEMORY_SHOTS")  # a folder: save screenshots of each tab there


@pytest.fixture
async def window(bridge: CoreBridge, qtbot) -> AsyncIterator[MemoryWindow]:  # type: ignore[no-untyped-def]
    made = MemoryWindow(bridge.core.get(Memory), bridge)
    qtbot.addWidget(made)
    made.resize(1040, 700)
    made.show()
    yield made  # pytest-qt closes and deletes it before fixtures are torn down
    await until(lambda: not taskset.pending(), message="the window's background work to finish")


def shot(widget: Any, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        widget.grab().save(str(Path(SHOTS) / f"{name}.png"))


def type_text(qtbot, widget: Any, text: str) -> None:  # type: ignore[no-untyped-def]
    """keyClicks cannot type a newline: press Return between lines."""
    for number, line in enumerate(text.split("\n")):
        if number:
            qtbot.keyClick(widget, Qt.Key.Key_Return)
        if line:
            qtbot.keyClicks(widget, line)


async def type_at_the_end_of_memory_md(qtbot, window: MemoryWindow, words: str) -> None:  # type: ignore[no-untyped-def]
    """Edit on MEMORY.md once it is shown, and words typed at its end: unsaved edits."""
    tab = window.memory
    await until(lambda: "Long-term memory" in tab.view.toPlainText())
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    tab.editor.moveCursor(tab.editor.textCursor().MoveOperation.End)
    qtbot.keyClicks(tab.editor, words)


async def subjects(bridge: CoreBridge) -> list[str]:
    return [c.subject for c in await bridge.core.get(Memory).git.log()]


async def test_edit_and_save_a_memory_file(window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:  # type: ignore[no-untyped-def]
    tab = window.memory
    workspace = bridge.core.workspace
    await until(lambda: "Long-term memory" in tab.view.toPlainText())
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    assert tab.stack.currentWidget() is tab.editor
    tab.editor.moveCursor(tab.editor.textCursor().MoveOperation.End)
    type_text(qtbot, tab.editor, "\n## Projects\n- Atlas runs on Postgres 16\n")
    shot(window, "memory-editing")
    qtbot.mouseClick(tab.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: "Saved memory/MEMORY.md" in tab.notice.text())
    saved = (workspace / "memory" / "MEMORY.md").read_text()
    assert saved.endswith("## Projects\n- Atlas runs on Postgres 16\n")
    assert tab.stack.currentWidget() is tab.view and "Atlas runs on Postgres 16" in tab.view.toPlainText()
    assert (await subjects(bridge))[0] == "Edit memory/MEMORY.md by hand"
    assert "Atlas" in bridge.core.context.system_prompt()  # the next turn sees it
    shot(window, "memory")


async def test_outside_edits_reload_but_never_overwrite_typing(window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:  # type: ignore[no-untyped-def]
    tab = window.memory
    user = bridge.core.workspace / "USER.md"
    tab.files.setCurrentIndex(tab.files.model().index(1, 0))
    await until(lambda: "About the user" in tab.view.toPlainText())
    user.write_text("# About the user\n\n- Name: Sam\n")
    await until(lambda: "Name: Sam" in tab.view.toPlainText(), message="the outside edit to show")
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(tab.editor, "my words ")
    user.write_text("# About the user\n\n- Name: Alex\n")
    await until(lambda: tab.load_theirs.isVisible(), message="the conflict notice")
    assert "changed outside this window" in tab.notice.text()
    shot(window, "memory-conflict")
    assert tab.editor.toPlainText().startswith("my words ")  # typing kept
    qtbot.mouseClick(tab.load_theirs, Qt.MouseButton.LeftButton)
    assert "Name: Alex" in tab.editor.toPlainText()


async def test_restore_a_change_from_its_diff(window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:  # type: ignore[no-untyped-def]
    core = bridge.core
    user = core.workspace / "USER.md"
    original = user.read_text()
    await core.get(Memory).git.ensure()
    user.write_text(original.replace("- Name:", "- Name: Sam"))
    rev = await core.get(Memory).git.commit(["USER.md"], "Dream: update USER.md\n\n- [USER] Name is Sam")
    assert rev is not None
    window.show_commit(rev[:7])
    tab = window.changes
    await until(lambda: tab.shown_rev == rev and "Name: Sam" in tab.diff.toPlainText())
    assert window.tabs.currentWidget() is tab
    assert "background:#dcfce7" in tab.diff.toHtml().replace(" ", "") or "#dcfce7" in tab.diff.toHtml()
    assert "Dream: update USER.md" in tab.title.text()
    shot(window, "changes")
    qtbot.mouseClick(tab.restore_button, Qt.MouseButton.LeftButton)
    await until(lambda: "Restored USER.md" in tab.notice.text())
    assert user.read_text() == original
    await until(lambda: tab.model.rowCount() == 3)
    assert tab.model.item(0).text().startswith(f"Restore USER.md to before {rev[:7]}")
    await until(lambda: tab.title.text().startswith("<b>Restore USER.md"), message="the new change to show")
    assert "+- Name:" in tab.diff.toPlainText()  # its diff puts the old line back
    shot(window, "changes-restored")
    assert (await subjects(bridge))[:2] == [f"Restore USER.md to before {rev[:7]}", "Dream: update USER.md"]


def write_history(path: Path, count: int) -> None:
    start = datetime(2026, 1, 1, 9, 0)
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(1, count + 1):
            day = start + timedelta(days=i // 100)
            content = f"Entry {i}: " + ("found the blue needle in the haystack" if i % 250 == 0 else "ordinary talk")
            fh.write(json.dumps({"cursor": i, "timestamp": day.isoformat(), "session_key": f"desktop:s{i % 7}",
                                 "content": content}) + "\n")


async def test_history_search_by_text_regex_and_date(window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:  # type: ignore[no-untyped-def]
    write_history(bridge.core.get(Memory).store.history_file, 3000)
    tab = window.history
    window.tabs.setCurrentWidget(tab)
    await until(lambda: tab.loaded and not tab.searching and tab.model.rowCount() == 3000)
    assert tab.model.entries[0].cursor == 3000  # newest first
    assert tab.model.index(0, 2).data() == "Entry 3000: found the blue needle in the haystack"

    qtbot.keyClicks(tab.text, "BLUE needle")
    await until(lambda: tab.status.text().startswith("12 matches"), message="the substring search")
    assert [e.cursor for e in tab.model.entries][:3] == [3000, 2750, 2500]
    shot(window, "history")

    tab.text.clear()
    qtbot.keyClicks(tab.text, r"Entry 2\d{3}: found")
    tab.regex.setChecked(True)
    await until(lambda: tab.status.text().startswith("4 matches"), message="the regex search")
    assert [e.cursor for e in tab.model.entries] == [2750, 2500, 2250, 2000]

    tab.regex.setChecked(False)
    tab.text.setText("needle")
    tab.by_date.setChecked(True)
    tab.first_day.setDate(QDate(2026, 1, 3))  # entries 200-299
    tab.last_day.setDate(QDate(2026, 1, 8))  # ... to 799
    await until(lambda: tab.status.text().startswith("3 matches"), message="the date range")
    assert [e.cursor for e in tab.model.entries] == [750, 500, 250]

    tab.by_date.setChecked(False)
    tab.regex.setChecked(True)
    tab.text.setText("needle(")
    await until(lambda: tab.status.text().startswith("Invalid regular expression"))
    assert tab.model.rowCount() == 0

    tab.regex.setChecked(False)
    tab.text.setText("needle")
    await until(lambda: not tab.searching and tab.model.rowCount() == 12)
    tab.table.selectRow(1)
    assert tab.detail.toPlainText().endswith("Entry 2750: found the blue needle in the haystack")
    assert "(deleted chat)" in tab.detail.toPlainText()


async def test_a_date_range_that_ends_before_it_starts_is_said(window: MemoryWindow, bridge: CoreBridge) -> None:
    """"Between" a later day and an earlier one showed "0 matches", as if nothing were there to find."""
    write_history(bridge.core.get(Memory).store.history_file, 1000)
    tab = window.history
    window.tabs.setCurrentWidget(tab)
    await until(lambda: tab.loaded and not tab.searching and tab.model.rowCount() == 1000)
    tab.text.setText("needle")
    tab.by_date.setChecked(True)
    tab.first_day.setDate(QDate(2026, 1, 8))
    tab.last_day.setDate(QDate(2026, 1, 3))
    await until(lambda: "after the last" in tab.status.text(), message="the backwards range said")
    assert tab.status.text().startswith("The first day, 2026-01-08, is after the last, 2026-01-03")
    assert tab.model.rowCount() == 0
    tab.last_day.setDate(QDate(2026, 1, 8))
    await until(lambda: tab.status.text().startswith("1 match "), message="a one-day range searched")


async def test_a_regex_that_backtracks_without_end_stops_in_its_time_and_the_window_draws_meanwhile(
        window: MemoryWindow, bridge: CoreBridge, monkeypatch: pytest.MonkeyPatch) -> None:
    """history.jsonl is workspace text a sandboxed command can write; Python's own `re` takes hours over this entry
    and holds the interpreter lock all along, so the window froze and a new search could not start."""
    monkeypatch.setattr("desktop.memory.history_search.SEARCH_SECONDS", 2.0)
    with open(bridge.core.get(Memory).store.history_file, "w", encoding="utf-8") as fh:
        for cursor, content in enumerate(["a" * 40 + "!", "aa", "aaaa", "aaaaaa"], 1):  # newest first when searched
            fh.write(json.dumps({"cursor": cursor, "timestamp": "2026-01-01T09:00:00", "content": content}) + "\n")
    tab = window.history
    window.tabs.setCurrentWidget(tab)
    await until(lambda: tab.loaded and tab.model.rowCount() == 4)
    gaps: list[float] = []
    last = time.monotonic()

    def tick() -> None:
        nonlocal last
        gaps.append(time.monotonic() - last)
        last = time.monotonic()

    ticker = QTimer(interval=50, timeout=tick)
    ticker.start()
    tab.regex.setChecked(True)
    tab.text.setText("(a|aa)+$")
    await until(lambda: tab.status.text().startswith("Stopped"), timeout=30, message="the search given up")
    ticker.stop()
    assert tab.status.text() == ("Stopped: the regular expression takes too long on these entries (it backtracks too "
                                 "much); simplify it. 3 matches so far")
    assert [e.cursor for e in tab.model.entries] == [4, 3, 2] and not tab.searching
    assert max(gaps) < 1.5, f"the window stood still for {max(gaps):.1f} s"


async def test_history_names_chats_by_title_and_explains_itself_when_empty(window: MemoryWindow, bridge: CoreBridge) -> None:
    tab = window.history
    window.tabs.setCurrentWidget(tab)
    await until(lambda: tab.loaded)
    assert tab.model.rowCount() == 0
    assert "summarised here" in tab.detail.placeholderText()  # an empty tab says what will appear in it
    shot(window, "history-empty")

    core = bridge.core
    session = await core.sessions.load("desktop:a")
    session.metadata["title"] = "Trip to Lyon"
    await core.sessions.append(session, {"role": "user", "content": "Lyon?"})
    store = core.get(Memory).store
    store.append_history("desktop:a", "Planned a trip to Lyon.")
    store.append_history("desktop:gone", "A chat that was deleted since.")
    await tab.load()
    await until(lambda: tab.model.rowCount() == 2 and not tab.searching)
    chats = [tab.model.index(row, 1).data() for row in range(2)]
    assert chats == ["(deleted chat)", "Trip to Lyon"]  # newest first
    assert tab.model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole) == "desktop:gone"  # the key stays at hand
    tab.table.selectRow(1)
    assert " · Trip to Lyon · " in tab.detail.toPlainText()
    shot(window, "history-titles")
    assert "Select an entry" in tab.detail.placeholderText()


async def test_sessions_open_export_and_delete(window: MemoryWindow, tmp_path: Path, bridge: CoreBridge) -> None:
    core = bridge.core
    for key, title in (("desktop:a", "Trip to Lyon"), ("desktop:b", "Tax forms")):
        session = await core.sessions.load(key)
        session.metadata["title"] = title
        await core.sessions.append(session, {"role": "user", "content": f"About {title}"},
                                   {"role": "assistant", "content": f"Sure, {title}."})
    tab = window.sessions
    window.tabs.setCurrentWidget(tab)
    await until(lambda: tab.model.rowCount() == 2)
    titles = {tab.model.item(r, 0).text(): tab.model.item(r, 2).data(Qt.ItemDataRole.DisplayRole)
              for r in range(2)}
    assert titles == {"Trip to Lyon": 2, "Tax forms": 2}
    shot(window, "sessions")

    opened: list[str] = []
    window.open_session.connect(opened.append)
    tab.select("desktop:a")
    tab.open_button.click()
    assert opened == ["desktop:a"]

    target = tmp_path / "lyon.md"

    async def pick(suggested: str) -> Path:
        assert suggested == "Trip-to-Lyon.md"
        return target

    tab.pick_export_path = pick
    assert await tab.export() == target
    text = target.read_text()
    assert text.startswith("# Trip to Lyon\n") and "**You**" in text and "About Trip to Lyon" in text
    assert "**Nanobot**" in text and "Sure, Trip to Lyon." in text

    answers = [False, True]

    async def confirm(title: str, text: str, action: str) -> bool:
        assert action == "Delete" and "Trip to Lyon" in text
        return answers.pop(0)

    tab.confirm = confirm
    assert await tab.delete() is False and core.sessions.path_for("desktop:a").exists()
    assert await tab.delete() is True
    assert not core.sessions.path_for("desktop:a").exists()
    assert [tab.model.item(r, 0).text() for r in range(tab.model.rowCount())] == ["Tax forms"]


async def test_a_memory_file_that_leads_out_is_not_shown_and_the_tab_says_why(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, tmp_path: Path, bridge: CoreBridge) -> None:
    secret = tmp_path / "private.md"
    secret.write_text("PRIVATE-CONTENT\n")
    user = bridge.core.workspace / "USER.md"
    user.unlink()
    user.symlink_to(secret)
    tab = window.memory
    tab.files.setCurrentIndex(tab.files.model().index(1, 0))
    await tab.reload()
    await until(lambda: "USER.md is a link that leads outside" in tab.notice.text())
    assert "Nothing of it is shown" in tab.notice.text() and "PRIVATE" not in tab.view.toPlainText()
    assert tab.view.toPlainText() == "Not shown." and not tab.edit_button.isEnabled()
    shot(window, "memory-refused")
    user.unlink()
    user.write_text("# About the user\n\n- Name: Sam\n")
    await until(lambda: "Name: Sam" in tab.view.toPlainText(), message="the plain file to show")
    assert tab.notice.text() == "" and tab.edit_button.isEnabled()


async def test_cancel_after_an_outside_edit_shows_the_file_as_it_is_now(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:
    """Cancelling edits made while Dream rewrote the file shows Dream's version, and Edit starts from it: the
    old text shown there would be saved back over Dream's the next time."""
    tab = window.memory
    user = bridge.core.workspace / "USER.md"
    tab.files.setCurrentIndex(tab.files.model().index(1, 0))
    await until(lambda: "About the user" in tab.view.toPlainText())
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(tab.editor, "my words ")
    user.write_text("# About the user\n\n- Name: Alex\n")
    await until(lambda: tab.load_theirs.isVisible(), message="the conflict notice")
    qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert "Name: Alex" in tab.view.toPlainText()
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    assert "Name: Alex" in tab.editor.toPlainText()


async def test_a_save_never_silently_replaces_a_change_the_window_has_not_shown(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:
    """Dream rewrites USER.md a moment before Save (before the window noticed): the save stops and says so, the
    typing stays; a second Save, knowingly, replaces it (Dream's version stays in Changes)."""
    tab = window.memory
    user = bridge.core.workspace / "USER.md"
    tab.files.setCurrentIndex(tab.files.model().index(1, 0))
    await until(lambda: "About the user" in tab.view.toPlainText())
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(tab.editor, "my words ")
    user.write_text("# About the user\n\n- Name: Alex\n")
    assert not await tab.save()
    assert user.read_text() == "# About the user\n\n- Name: Alex\n"
    assert "changed outside this window" in tab.notice.text() and tab.load_theirs.isVisible()
    assert tab.editor.toPlainText().startswith("my words ")
    shot(window, "memory-save-conflict")
    assert await tab.save()
    assert user.read_text().startswith("my words ")


async def test_closing_the_window_while_a_memory_file_is_edited_asks_first(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:
    """Esc or the title bar's close with unsaved edits asks Save, Discard or Cancel: the edits are never left in a
    hidden window that quitting drops."""
    tab = window.memory
    memory_file = bridge.core.workspace / "memory" / "MEMORY.md"
    await type_at_the_end_of_memory_md(qtbot, window, "Atlas runs on Postgres 16")

    def question() -> QMessageBox | None:
        return next((w for w in window.findChildren(QMessageBox) if w.isVisible()), None)

    window.close()
    box = question()
    assert box is not None and "MEMORY.md" in box.text() and window.isVisible()
    box.button(QMessageBox.StandardButton.Cancel).click()
    assert window.isVisible() and tab.editor.toPlainText().endswith("Atlas runs on Postgres 16")
    window.close()
    box = question()
    assert box is not None
    box.button(QMessageBox.StandardButton.Save).click()
    await until(lambda: not window.isVisible(), message="saved, then closed")
    assert memory_file.read_text(encoding="utf-8").endswith("Atlas runs on Postgres 16")
    await until(lambda: not taskset.pending(), message="the save's history to be read")


async def test_a_memory_file_too_large_for_the_assistant_to_read_is_not_saved(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:
    """A 600 KB paste into USER.md: saved, the file would be over what the app reads, and the assistant (and this
    window) would get none of it. Save says so and keeps the text; the file stays as it was."""
    tab = window.memory
    user = bridge.core.workspace / "USER.md"
    before = user.read_text(encoding="utf-8")
    tab.files.setCurrentIndex(tab.files.model().index(1, 0))
    await until(lambda: "About the user" in tab.view.toPlainText())
    qtbot.mouseClick(tab.edit_button, Qt.MouseButton.LeftButton)
    pasted = "a line of a very long log\n" * 24_000
    tab.editor.setPlainText(pasted)
    assert not await tab.save()
    assert "Not saved" in tab.notice.text() and "512 KB" in tab.notice.text()
    assert user.read_text(encoding="utf-8") == before and tab.editor.toPlainText() == pasted
    shot(window, "memory-too-large")


async def test_a_history_entry_that_spells_markup_shows_on_hover_as_words_and_loads_no_file(
        window: MemoryWindow, bridge: CoreBridge, tmp_path: Path) -> None:
    """A history entry is the model's summary of a chat (and history.jsonl is workspace text a sandboxed command can
    write); its text shows on hover: an entry spelling <img src="/a/pipe"> was read as markup by that tooltip, and
    Qt read the file it named as the tooltip was shown (a named pipe froze the app for good). It shows the words."""
    pipe = tmp_path / "pipe"
    said = [f'Looked at <img src="{pipe}">.', f"Looked at <IMG SRC='{pipe}'>."]
    store = bridge.core.get(Memory).store
    for words in said:
        store.append_history("desktop:a", words)
    tab = window.history
    window.tabs.setCurrentWidget(tab)
    await tab.load()
    await until(lambda: tab.model.rowCount() == 2 and not tab.searching)
    tips = []
    with watched_pipe(pipe) as opened:
        for row in range(2):
            index = tab.model.index(row, 2)
            tips.append(hover_tip(tab.table.viewport(), tab.table.visualRect(index).center()))
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert sorted(tips) == sorted(said)
    assert opened == [], "the entry's tooltip read the pipe it named"


async def test_typing_on_while_a_save_is_written_is_kept_in_the_editor(  # type: ignore[no-untyped-def]
        window: MemoryWindow, qtbot, bridge: CoreBridge) -> None:
    """Ctrl+S, then typing on at once: the save (a read, a write and a history commit, off the GUI thread) ends
    after more was typed. What was typed since is still in the editor, not saved, and the window says so."""
    tab = window.memory
    memory_file = bridge.core.workspace / "memory" / "MEMORY.md"
    await type_at_the_end_of_memory_md(qtbot, window, "Atlas runs on Postgres 16.")
    saving = taskset.spawn(tab.save())
    await asyncio.sleep(0)  # the save has read the editor and waits on the disk
    qtbot.keyClicks(tab.editor, " Backups nightly.")
    assert await saving
    assert memory_file.read_text(encoding="utf-8").endswith("Atlas runs on Postgres 16.")
    assert tab.stack.currentWidget() is tab.editor and tab.dirty
    assert tab.editor.toPlainText().endswith("Atlas runs on Postgres 16. Backups nightly.")
    assert "not saved" in tab.notice.text()
    window.close()  # the typing since the save is not saved: closing asks
    assert window.isVisible()
    box = next(w for w in window.findChildren(QMessageBox) if w.isVisible())
    box.button(QMessageBox.StandardButton.Save).click()
    await asyncio.sleep(0)  # that save too has read the editor: typing on, the window stays with it
    qtbot.keyClicks(tab.editor, " Kept 30 days.")
    await until(lambda: not taskset.pending(), message="the save and its history")
    assert window.isVisible() and tab.dirty and "not saved" in tab.notice.text()
    assert memory_file.read_text(encoding="utf-8").endswith("Atlas runs on Postgres 16. Backups nightly.")
    assert await tab.save()
    assert memory_file.read_text(encoding="utf-8").endswith("Backups nightly. Kept 30 days.")
    await until(lambda: not taskset.pending(), message="the save's history to be read")

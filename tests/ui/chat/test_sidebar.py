"""The chat list: a rename the person is typing survives the chat's turn ending, the busy dot shows, chats are
grouped by day with pinned ones first, and the search field opens the search of every chat."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QLineEdit, QMenu

from desktop.session.session import SessionInfo, SessionStore
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.sidebar import KEY_ROLE, SessionList
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip, until

KEY = "desktop:a"


def listed(qtbot, busy: set[str], title: str = "Plan my week") -> SessionList:  # type: ignore[no-untyped-def]
    sidebar = shown_list(qtbot)
    sidebar.set_sessions([SessionInfo(KEY, title, "", 2)], KEY, busy)
    return sidebar


def shown_list(qtbot) -> SessionList:  # type: ignore[no-untyped-def]
    """An empty chat list on screen, at a sidebar's size."""
    sidebar = SessionList()
    qtbot.addWidget(sidebar)
    sidebar.resize(260, 300)
    sidebar.show()
    return sidebar


def renamed(qtbot, sidebar: SessionList) -> list[str]:  # type: ignore[no-untyped-def]
    titles: list[str] = []
    sidebar.rename_requested.connect(lambda key, title: titles.append(title))
    sidebar.start_rename(KEY)
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Plan my week"
    editor.setText("Weekly")
    return titles


def test_a_turn_ending_while_a_title_is_typed_keeps_the_typing(qtbot) -> None:  # type: ignore[no-untyped-def]
    sidebar = listed(qtbot, {KEY})
    titles = renamed(qtbot, sidebar)
    sidebar.set_busy(KEY, False)  # the chat's answer finished while the person was typing
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None and editor.text() == "Weekly"
    qtbot.keyClicks(editor, " plan")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    sidebar.set_busy(KEY, True)  # Return commits on the next pass of the event loop: a turn may start first
    qtbot.waitUntil(lambda: titles == ["Weekly plan"], timeout=2000)
    assert sidebar.title_of(KEY) == "Weekly plan"


def test_a_blank_rename_leaves_the_chat_its_name(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Spaces alone typed as a name: nothing was renamed, yet the list showed the chat with no name at all."""
    sidebar = listed(qtbot, set())
    titles = renamed(qtbot, sidebar)
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None
    editor.setText("   ")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: sidebar.list.findChild(QLineEdit) is None or not sidebar.list.findChild(QLineEdit)
                    .isVisible(), timeout=2000)
    assert titles == []
    assert sidebar.title_of(KEY) == "Plan my week"


def picture(sidebar: SessionList) -> QImage:
    sidebar.list.viewport().repaint()
    return sidebar.list.viewport().grab().toImage()


def test_a_busy_chat_shows_a_dot_until_its_turn_ends(qtbot) -> None:  # type: ignore[no-untyped-def]
    sidebar = listed(qtbot, set())
    idle = picture(sidebar)
    sidebar.set_busy(KEY, True)
    busy = picture(sidebar)
    assert busy != idle
    sidebar.set_busy(KEY, False)
    assert picture(sidebar) == idle
    sidebar.set_sessions([SessionInfo(KEY, "Plan my week", "", 2)], KEY, {KEY})
    assert picture(sidebar) == busy


async def test_a_rename_its_file_cannot_take_says_so_and_the_chat_keeps_its_name(
        window: ChatWindow, bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    """The list showed the new name and nothing said it was not saved; the next start showed the old one."""
    write_chat(bridge, "desktop:old", "Garden plan", datetime.now().astimezone())
    window.show_session("desktop:old")
    await until(lambda: window.models["desktop:old"].loaded, message="the chat read")
    await window.refresh_sessions()
    path = bridge.core.sessions.path_for("desktop:old")
    path.unlink()
    (path / "in-the-way").mkdir(parents=True)  # a folder where its file goes: no write can land there
    window.sidebar.start_rename("desktop:old")
    editor = window.sidebar.list.findChild(QLineEdit)
    assert editor is not None
    editor.setText("Vegetable garden")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    await until(lambda: "could not be renamed" in window.composer.hint.text(), message="the failure said")
    await window.refresh_sessions()
    assert window.sidebar.title_of("desktop:old") == "Garden plan"


def write_chat(bridge: CoreBridge, key: str, title: str, when: datetime) -> None:
    """A saved chat last active at `when` (as a file from earlier days would be)."""
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = when.isoformat()
    lines = [{"_type": "metadata", "key": key, "title": title, "updated_at": stamp},
             {"role": "user", "content": title, "timestamp": stamp}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def test_chats_are_grouped_by_day_pinned_first_and_quick_ones_marked(
        window: ChatWindow, bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now().astimezone()
    write_chat(bridge, "desktop:today", "Groceries", now)
    write_chat(bridge, "quick:asked", "What time is it in Tokyo", now - timedelta(minutes=5))
    write_chat(bridge, "desktop:yday", "Trip to Lisbon", now - timedelta(days=1))
    write_chat(bridge, "desktop:week", "Tax return", now - timedelta(days=4))
    write_chat(bridge, "desktop:old", "Garden plan", now - timedelta(days=40))
    await window.refresh_sessions()
    sidebar = window.sidebar
    assert sidebar.headers() == ["Today", "Yesterday", "Previous 7 days", "Older"]
    assert sidebar.session_keys().index("desktop:yday") < sidebar.session_keys().index("desktop:old")
    quick = sidebar.list.item(next(i for i in range(sidebar.list.count())
                                   if sidebar.list.item(i).data(KEY_ROLE) == "quick:asked"))
    assert quick.toolTip().startswith("✦ Asked in the quick prompt")

    sidebar.select("desktop:today")
    sidebar.list.setFocus()
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Down)
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Down)
    assert sidebar.current_key() == "desktop:yday"  # the "Yesterday" header is stepped over

    old = sidebar.list.visualItemRect(sidebar.list.item(
        next(i for i in range(sidebar.list.count()) if sidebar.list.item(i).data(KEY_ROLE) == "desktop:old")))
    sidebar.list.customContextMenuRequested.emit(old.center())
    menu = sidebar.findChildren(QMenu)[-1]
    next(a for a in menu.actions() if a.text() == "Pin to the top").trigger()
    await until(lambda: sidebar.headers()[:1] == ["Pinned"], message="the Pinned group")
    assert sidebar.session_keys()[0] == "desktop:old"
    window.grab().save("/tmp/ux5shots/sidebar-groups.png")

    def meta() -> dict[str, Any]:
        return json.loads(bridge.core.sessions.path_for("desktop:old").read_text(encoding="utf-8").splitlines()[0])

    # the list may show the pin (a refresh of its own, e.g. after the chat picked above) before the file has it
    await until(lambda: meta().get("pinned") is True, message="the pin saved in the chat's file")
    assert meta()["updated_at"] == (now - timedelta(days=40)).isoformat()  # not "used now"

    reopened = ChatWindow(bridge)  # the next start
    qtbot.addWidget(reopened)
    await reopened.refresh_sessions()
    assert reopened.sidebar.headers()[0] == "Pinned" and reopened.sidebar.session_keys()[0] == "desktop:old"

    menu.close()
    sidebar.list.customContextMenuRequested.emit(sidebar.list.visualItemRect(sidebar.list.item(1)).center())
    next(a for a in sidebar.findChildren(QMenu)[-1].actions() if a.text() == "Unpin").trigger()
    await until(lambda: "Pinned" not in sidebar.headers(), message="unpinned")


async def test_a_renamed_chat_keeps_its_place_and_its_day(
        window: ChatWindow, bridge: CoreBridge, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Renaming, like pinning, is no use of the chat: it stays where it was in the list, under its day, also
    after a restart (the chats read again from their files)."""
    now = datetime.now().astimezone()
    write_chat(bridge, "desktop:today", "Groceries", now)
    write_chat(bridge, "desktop:yday", "Trip to Lisbon", now - timedelta(days=1))
    write_chat(bridge, "desktop:old", "Garden plan", now - timedelta(days=40))
    window.show_session("desktop:today")
    await window.refresh_sessions()
    sidebar = window.sidebar
    before = sidebar.session_keys()
    assert before == ["desktop:today", "desktop:yday", "desktop:old"]

    sidebar.start_rename("desktop:old")  # F2 or the menu's Rename
    editor = sidebar.list.findChild(QLineEdit)
    assert editor is not None
    editor.setText("Vegetable garden")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    await until(lambda: "Vegetable garden" in (bridge.core.sessions.path_for("desktop:old")
                                               .read_text(encoding="utf-8").splitlines()[0]), message="saved")
    await window.refresh_sessions()
    assert sidebar.title_of("desktop:old") == "Vegetable garden"
    assert sidebar.session_keys() == before and sidebar.headers() == ["Today", "Yesterday", "Older"]

    restarted = SessionStore(bridge.core.sessions.directory)  # the next start reads the files afresh
    listed = await restarted.list()
    assert [info.key for info in listed] == before
    old = next(info for info in listed if info.key == "desktop:old")
    assert old.title == "Vegetable garden" and old.updated_at == (now - timedelta(days=40)).isoformat()


async def test_picking_a_chats_model_keeps_its_place_and_its_day(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    """Choosing another model for an older chat is no use of it either: the list keeps its order and days."""
    now = datetime.now().astimezone()
    write_chat(bridge, "desktop:today", "Groceries", now)
    write_chat(bridge, "desktop:old", "Garden plan", now - timedelta(days=40))
    fake.models = ["test", "qwen3:8b"]
    window.show_session("desktop:old")
    await window.refresh_sessions()
    before = window.sidebar.session_keys()
    assert before == ["desktop:today", "desktop:old"]
    picker = window.model_picker
    await picker.refresh()
    picker.activated.emit([picker.itemText(i) for i in range(picker.count())].index("openai/qwen3:8b"))
    await until(lambda: '"model": "openai/qwen3:8b"' in bridge.core.sessions.path_for("desktop:old")
                .read_text(encoding="utf-8").splitlines()[0], message="the pick saved")
    await window.refresh_sessions()
    assert window.sidebar.session_keys() == before and window.sidebar.headers() == ["Today", "Older"]
    listed = await SessionStore(bridge.core.sessions.directory).list()  # as the next start reads it
    assert next(i for i in listed if i.key == "desktop:old").updated_at == (now - timedelta(days=40)).isoformat()


def detail(sidebar: SessionList, key: str) -> str:
    """The chat's second line in the list ("5 min ago · 2 messages")."""
    row = next(i for i in range(sidebar.list.count()) if sidebar.list.item(i).data(KEY_ROLE) == key)
    return sidebar.delegate.detail(sidebar.list.indexFromItem(sidebar.list.item(row)))


async def test_a_chats_message_count_is_what_the_person_sees_as_messages(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """"N messages" in the chat list counts the person's messages and the answers: not a turn's tool calls and
    their results, nor the app's own notes (a background task's report), for the open chat and a saved one
    alike, also after a restart."""
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo hi"}}]}, {"content": "It said hi."})
    window.send("say hi in the shell", [])
    await until(lambda: not bridge.conversations.busy("desktop:test")
                and len(window.models["desktop:test"].rows) == 3, timeout=60, message="the turn")
    stamp = datetime.now().astimezone().isoformat()
    saved = [{"_type": "metadata", "key": "desktop:saved", "title": "Trip", "updated_at": stamp},
             {"role": "user", "content": "what is in my notes?", "timestamp": stamp},
             {"role": "assistant", "content": None, "timestamp": stamp, "tool_calls": [
                 {"id": "c1", "type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "c1", "name": "list_dir", "content": "a.md", "timestamp": stamp},
             {"role": "assistant", "content": "Just a.md.", "timestamp": stamp},
             {"role": "user", "kind": "subagent_result", "content": "[Background task finished]", "timestamp": stamp},
             {"role": "assistant", "content": "The task is done.", "timestamp": stamp}]
    path = bridge.core.sessions.path_for("desktop:saved")
    path.write_text("".join(json.dumps(line) + "\n" for line in saved), encoding="utf-8")
    await window.refresh_sessions()
    assert detail(window.sidebar, "desktop:test").endswith(" · 2 messages")
    assert detail(window.sidebar, "desktop:saved").endswith(" · 3 messages")
    with path.open("a", encoding="utf-8") as file:  # by another process (`cron run-due` on a timer)
        file.write(json.dumps({"role": "user", "content": "thanks", "timestamp": stamp}) + "\n")
    await window.refresh_sessions()
    assert detail(window.sidebar, "desktop:saved").endswith(" · 4 messages")
    restarted = SessionStore(bridge.core.sessions.directory)  # the next start reads the files afresh
    assert {info.key: info.message_count for info in await restarted.list()} == {"desktop:test": 2,
                                                                                  "desktop:saved": 4}


async def test_the_search_field_opens_the_search_of_every_chat(window: ChatWindow, qtbot) -> None:  # type: ignore[no-untyped-def]
    field = window.sidebar.search_field
    assert field.isVisible() and "Ctrl+K" in field.placeholderText()
    qtbot.keyClick(field, "l")  # typing there goes on in the search panel
    assert window.search_all.field.hasFocus()
    qtbot.keyClicks(window.search_all.field, "is")
    assert window.search_all.isVisible() and window.search_all.field.text() == "lis" and field.text() == ""
    window.search_all.dismiss()
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    assert window.search_all.isVisible() and window.search_all.field.hasFocus()


def test_a_chat_title_that_spells_markup_shows_as_words_on_hover_and_loads_no_file(
        qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A chat a reminder started is titled by the reminder's name, which the model chose: spelling
    <img src="/a/pipe">, the chat's tooltip in the list read it as markup, and Qt read the file it named as the
    tooltip was shown: a named pipe froze the app for good. It shows the title as words."""
    pipe = tmp_path / "pipe"
    title = f"Reminder: <img src=\"{pipe}\"> and <IMG SRC='{pipe}'>"
    sidebar = shown_list(qtbot)
    with watched_pipe(pipe) as opened:
        sidebar.set_sessions([SessionInfo(KEY, title, "", 2)], KEY, set())
        item = next(sidebar.list.item(i) for i in range(sidebar.list.count())
                    if sidebar.list.item(i).data(KEY_ROLE) == KEY)
        sidebar.grab()  # laid out and painted, as on screen
        tip = hover_tip(sidebar.list.viewport(), sidebar.list.visualItemRect(item).center())
        sidebar.close()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tip == title
    assert opened == [], "the chat list read the pipe a title named"


def test_deleting_a_chat_titled_as_markup_asks_in_words_and_loads_no_file(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Delete asks first, naming the chat by its title, which a reminder's name (the model's choice) can be:
    spelling <img src="/a/pipe">, the question read it as markup, and Qt read the file it named as the question
    was shown (a named pipe froze the app for good). The question names the chat in words."""
    pipe = tmp_path / "pipe"
    title = f"Reminder: <img src=\"{pipe}\"> and <IMG SRC='{pipe}'>"
    sidebar = listed(qtbot, set(), title)
    with watched_pipe(pipe) as opened:
        sidebar.confirm_delete(KEY)
        box = sidebar.delete_box
        assert box is not None
        box.grab()  # laid out and painted, as on screen
        asked = box.text()
        box.reject()
        sidebar.close()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert asked.splitlines()[0] == f"Delete “{title}”?"
    assert opened == [], "the question read the pipe a title named"

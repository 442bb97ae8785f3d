"""The chat header's Export menu on a real chat window and core: Markdown, HTML and PDF files of the chat shown."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit, QMessageBox, QStyle, QWidget

from desktop.chats import ChatExport
from desktop.session.session import Session
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.chats.export_menu import ExportMenu
from tests.chats.conftest import KEY, PNG, a_chat
from tests.pipes import watched_pipe
from tests.ui.conftest import until


async def shown_with_a_chat(bridge: CoreBridge, qtbot: Any, tmp_path: Path,
                            chat: Session | None = None) -> ExportMenu:
    """A chat window with its Export menu, showing `chat` (a saved chat of every kind of step by default)."""
    if chat is None:
        chat = a_chat(tmp_path / "photo.png")
        await bridge.core.sessions.rewrite(chat)
    window = ChatWindow(bridge, [lambda: ExportMenu(bridge.core.get(ChatExport))])
    qtbot.addWidget(window)
    window.show()
    window.show_session(chat.key)
    menu = window.findChild(ExportMenu)
    assert menu is not None
    return menu


def shown(parent: QWidget, kind: type) -> Any:
    found = [w for w in parent.findChildren(kind) if w.isVisible()]
    return found[0] if found else None


async def choose(menu: ExportMenu, path: Path) -> None:
    """What a person does in the save dialog: types where, and saves."""
    await until(lambda: shown(menu.window(), QFileDialog), message="the save dialog open")
    dialog = shown(menu.window(), QFileDialog)
    dialog.findChild(QLineEdit, "fileNameEdit").setText(str(path))
    dialog.accept()


def _reject_open_file_dialogs() -> None:
    for widget in QApplication.allWidgets():
        if isinstance(widget, QFileDialog) and widget.isVisible():
            widget.reject()


async def test_the_save_dialog_leaves_the_app_running_and_suggests_the_chats_title(
        bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    """The dialog was Qt's static one, a nested event loop: the agent stood still while it was open (and a test
    could not answer it). And it suggested "chat.md" for every chat. It is now opened and awaited, in the home
    folder, with the chat's title made a safe file name."""
    chat = a_chat(tmp_path / "photo.png")
    chat.metadata["title"] = " Q3 / Q4\x07 budget\tnotes "
    await bridge.core.sessions.rewrite(chat)
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path, chat)
    Path.home().mkdir(exist_ok=True)  # HOME is the test's own
    QTimer.singleShot(3000, _reject_open_file_dialogs)  # a nested loop would hold trigger() until then
    menu.button.menu().actions()[0].trigger()
    await until(lambda: shown(menu.window(), QFileDialog), timeout=10, message="the dialog open, trigger() done")
    dialog = shown(menu.window(), QFileDialog)
    assert dialog.findChild(QLineEdit, "fileNameEdit").text() == "Q3 Q4 budget notes.md"
    assert Path(dialog.directory().absolutePath()) == Path.home()
    dialog.reject()
    await until(lambda: not shown(menu.window(), QFileDialog), message="the dialog gone")


async def test_an_untitled_chat_is_suggested_as_chat(bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    untitled = Session("desktop:untitled", [{"role": "user", "content": "Hi"}])
    await bridge.core.sessions.rewrite(untitled)
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path, untitled)
    menu.button.menu().actions()[2].trigger()
    await until(lambda: shown(menu.window(), QFileDialog), message="the dialog open")
    dialog = shown(menu.window(), QFileDialog)
    assert dialog.findChild(QLineEdit, "fileNameEdit").text() == "Chat.pdf"
    dialog.reject()


@pytest.mark.parametrize("fmt", ["md", "html", "pdf"])
async def test_export_menu_writes_the_chat_shown(bridge: CoreBridge, qtbot: Any, tmp_path: Path, fmt: str) -> None:
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    assert menu.button.isVisible() and menu.button.isEnabled()
    assert [a.text() for a in menu.button.menu().actions()] == ["Markdown…", "HTML page…", "PDF…", "",
                                                                "All chats as a zip…"]

    out = tmp_path / f"friday.{fmt}"
    menu.button.menu().actions()[["md", "html", "pdf"].index(fmt)].trigger()
    await choose(menu, out)
    await until(lambda: out.exists() and menu.button.isEnabled(), timeout=30)
    data = out.read_bytes()
    if fmt == "md":
        assert data.decode().startswith("# Plans for <b>Friday</b>") and b"**You:**" in data
    elif fmt == "html":
        assert b"<strong>two</strong>" in data and b"data:image/png;base64," in data
    else:
        assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF") and len(data) > 1000


async def test_a_name_typed_without_its_ending_is_saved_with_it(bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    """The suggested name replaced by one typed without ".pdf" (or ".zip"): the file was saved as "friday", with no
    ending, which the file manager then offered to open as text. It gets the format's ending."""
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    menu.button.menu().actions()[2].trigger()
    await choose(menu, tmp_path / "friday")
    out = tmp_path / "friday.pdf"
    await until(lambda: out.exists() and menu.button.isEnabled(), timeout=30)
    assert out.read_bytes().startswith(b"%PDF") and not (tmp_path / "friday").exists()
    menu.button.menu().actions()[4].trigger()
    await choose(menu, tmp_path / "backup")
    await until(lambda: (tmp_path / "backup.zip").exists() and menu.button.isEnabled(), timeout=30)
    assert zipfile.is_zipfile(tmp_path / "backup.zip")


async def test_a_pdf_shows_no_picture_an_answer_names_by_path(bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    """An answer is the model's words, which web pages and workspace files steer. A picture it named by path
    (![chart](/home/you/Pictures/private.png), a named pipe) was read when the PDF was laid out: the picture went
    into the PDF, and a pipe froze the app for good. The HTML page never loads them (its pictures are data: URLs);
    now neither page names them, and the picture the person attached is still in the PDF."""
    private = tmp_path / "private.png"
    private.write_bytes(PNG)
    named = Session("desktop:named", [{"role": "user", "content": "Show me the chart"}])
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    with watched_pipe(tmp_path / "pipe") as opened:
        named.messages.append({"role": "assistant", "content": f"![chart]({private}) and ![more]({tmp_path / 'pipe'})"})
        await bridge.core.sessions.rewrite(named)
        await menu.export_to("pdf", tmp_path / "named.pdf", named.key)
        await menu.export_to("pdf", tmp_path / "attached.pdf", KEY)
    assert not opened, "the pipe an answer named was opened"
    assert b"/Subtype /Image" not in (tmp_path / "named.pdf").read_bytes(), "a picture named by an answer is in it"
    assert b"/Subtype /Image" in (tmp_path / "attached.pdf").read_bytes()  # the photo the person attached
    page = await bridge.core.get(ChatExport).export(named.key, "html")
    assert "<img" not in page and "<p>chart and more</p>" in page


@pytest.mark.parametrize("fmt", ["md", "pdf"])
async def test_a_file_that_cannot_be_written_is_said(bridge: CoreBridge, qtbot: Any, tmp_path: Path, fmt: str) -> None:
    """A PDF the chosen place could not take was reported as nothing at all: no file, no word (the Markdown said
    why). Both now say it could not be saved, and where."""
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    (tmp_path / "not-a-folder").write_text("a file where the folder should be", encoding="utf-8")
    out = tmp_path / "not-a-folder" / f"friday.{fmt}"
    menu.button.menu().actions()[["md", "html", "pdf"].index(fmt)].trigger()
    await choose(menu, out)
    await until(lambda: shown(menu.window(), QMessageBox) and menu.button.isEnabled(), message="the failure said")
    box = shown(menu.window(), QMessageBox)
    assert box.text().startswith(f"Could not save {out}")
    box.accept()


async def test_all_chats_as_a_zip_holds_each_chat_readable_and_its_file_to_restore(
        bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    other = Session("desktop:other", [{"role": "user", "content": "Tomatoes?"},
                                      {"role": "assistant", "content": "In May."}], {"title": "Garden / plans"})
    await bridge.core.sessions.rewrite(other)
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    chat = await bridge.core.sessions.load(KEY)

    out = tmp_path / "backup.zip"
    menu.button.menu().actions()[-1].trigger()
    await choose(menu, out)
    await until(lambda: out.exists() and menu.button.isEnabled(), timeout=30)
    with zipfile.ZipFile(out) as archive:
        names = sorted(archive.namelist())
        readable = [n for n in names if n.startswith("chats/")]
        assert len(readable) == 2 and any(n.endswith(" Garden plans.md") for n in readable), names
        garden = next(n for n in readable if "Garden" in n)
        assert "**Assistant:**\n\nIn May." in archive.read(garden).decode()
        for session in (chat, other):  # the app's own files, byte for byte
            saved = bridge.core.sessions.path_for(session.key)
            assert archive.read(f"sessions/{saved.name}") == saved.read_bytes()


async def test_the_menu_arrow_has_room_of_its_own(bridge: CoreBridge, qtbot: Any, tmp_path: Path) -> None:
    """The arrow that says Export opens a menu is drawn beside its word, not over its last letter."""
    menu = await shown_with_a_chat(bridge, qtbot, tmp_path)
    button = menu.button
    arrow = button.style().pixelMetric(QStyle.PixelMetric.PM_MenuButtonIndicator, None, button)
    assert button.width() >= button.fontMetrics().horizontalAdvance("Export") + arrow + 8
    button.grab().scaled(button.width() * 3, button.height() * 3).save(str(tmp_path / "export-button.png"))

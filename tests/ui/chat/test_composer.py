"""The message box's attachments through the real chat window: pasting a screenshot or copied files, the chips
with their thumbnails, the drop highlight, and where the file dialog opens."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, Qt, QUrl
from PySide6.QtGui import QColor, QDragEnterEvent, QDragLeaveEvent, QGuiApplication, QImage
from PySide6.QtWidgets import QLabel

from desktop.conversation.transcript import Kind
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.render import _Label, _Picture
from desktop.ui.chat.window import ChatWindow
from tests.fakeserver import FakeOpenAI, last_user_text
from tests.pdfs import pdf
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip, until

TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
SHOTS = Path("/tmp/ux5shots")


def screenshot(width: int = 640, height: int = 360) -> QImage:
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(QColor("#3366cc"))
    return image


async def test_a_pasted_screenshot_is_kept_in_the_data_folder_attached_and_shown_as_a_thumbnail(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    QGuiApplication.clipboard().setImage(screenshot())
    window.composer.input.setFocus()
    qtbot.keyClick(window.composer.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    await until(lambda: window.composer.attachments, message="the pasted picture attached")
    saved = Path(window.composer.attachments[0])
    assert saved.parent == bridge.core.home.pasted_dir and saved.suffix == ".png"
    assert not saved.is_relative_to(bridge.core.workspace)
    assert QImage(str(saved)).size() == screenshot().size()
    assert window.composer.input.toPlainText() == ""  # nothing typed in its place

    chip = window.composer.chips.itemAt(0).widget()
    await until(lambda: chip.picture.isVisible(), message="the chip's thumbnail")
    assert chip.picture.pixmap().height() == 36
    window.composer.grab().save(str(SHOTS / "composer-pasted-image.png"))

    fake.add({"content": "A blue rectangle."})
    qtbot.keyClicks(window.composer.input, "what is this?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models[window.current_key]
    await until(lambda: not model.busy and Kind.ASSISTANT in [r.kind for r in model.rows], timeout=TURN)
    content = fake.requests[-1]["messages"][-1]["content"]
    assert any(part.get("type") == "image_url" for part in content)
    window.view.viewport().repaint()
    pictures = [op for op in window.view.row_layout(0).ops if isinstance(op, _Picture)]
    assert [p.path for p in pictures] == [str(saved)]
    assert window.thumbnails.get(str(saved)) is not None  # drawn in the bubble, not its name
    window.grab().save(str(SHOTS / "bubble-thumbnail.png"))


async def test_files_copied_in_a_file_manager_attach_on_paste(window: ChatWindow, tmp_path: Path,
                                                              qtbot) -> None:  # type: ignore[no-untyped-def]
    notes = tmp_path / "notes.txt"
    notes.write_text("milk\n", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(notes))])
    mime.setText(str(notes))  # file managers offer the path as text too
    QGuiApplication.clipboard().setMimeData(mime)
    qtbot.keyClick(window.composer.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert window.composer.attachments == [str(notes)]
    assert window.composer.input.toPlainText() == ""


async def test_dragging_files_over_the_window_lights_up_the_message_box(window: ChatWindow,
                                                                        tmp_path: Path) -> None:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(tmp_path / "a.txt"))])
    window.event(QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                 Qt.KeyboardModifier.NoModifier))
    assert window.composer.property("dropping") is True
    assert window.composer.hint.text() == "Drop to attach"
    window.composer.grab().save(str(SHOTS / "composer-drop.png"))
    window.event(QDragLeaveEvent())
    assert window.composer.property("dropping") is False
    assert window.composer.hint.text().startswith("Enter to send")


async def test_the_file_dialog_opens_at_home_then_where_the_last_file_came_from(window: ChatWindow,
                                                                                tmp_path: Path) -> None:
    Path.home().mkdir(parents=True, exist_ok=True)
    chosen = tmp_path / "report.csv"
    chosen.write_text("a,b\n", encoding="utf-8")
    window.composer.choose_files()
    dialog = window.composer._dialog
    assert dialog is not None and Path(dialog.directory().absolutePath()) == Path.home()
    dialog.setDirectory(str(tmp_path))
    dialog.selectFile(str(chosen))
    dialog.accept()
    assert window.composer.attachments == [str(chosen)]
    window.composer.choose_files()
    assert Path(dialog.directory().absolutePath()) == tmp_path
    dialog.reject()


def paste_text(qtbot, window: ChatWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    QGuiApplication.clipboard().setText(text)
    qtbot.keyClick(window.composer.input, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)


async def test_a_long_paste_becomes_a_chip_to_read_or_remove_and_reaches_the_model_as_text(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    log = "\n".join(f"12:00:{i % 60:02d} worker {i} ok" for i in range(2376))
    paste_text(qtbot, window, "three\nshort\nlines")
    assert window.composer.input.toPlainText() == "three\nshort\nlines"  # a short paste is typed in
    window.composer.input.clear()

    paste_text(qtbot, window, log)
    await until(lambda: window.composer.attachments, message="the long paste attached")
    assert window.composer.input.toPlainText() == ""
    saved = Path(window.composer.attachments[0])
    assert saved.parent == bridge.core.home.pasted_dir and saved.read_text(encoding="utf-8") == log
    chip = window.composer.chips.itemAt(0).widget()
    assert chip.name.text() == "Pasted text, 2,376 lines  ▾"
    qtbot.mouseClick(chip.name, Qt.MouseButton.LeftButton)
    assert window.composer.preview.isVisible() and window.composer.preview.toPlainText() == log
    await until(lambda: not window.composer.input.verticalScrollBar().isVisible(), message="room for the message box")
    window.grab().save(str(SHOTS / "composer-pasted-text.png"))
    qtbot.mouseClick(chip.remove_button, Qt.MouseButton.LeftButton)
    assert window.composer.attachments == [] and not window.composer.preview.isVisible()

    paste_text(qtbot, window, log)
    await until(lambda: window.composer.attachments, message="pasted again")
    fake.add({"content": "All 2,376 workers are fine."})
    qtbot.keyClicks(window.composer.input, "anything wrong?")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models[window.current_key]
    await until(lambda: not model.busy and Kind.ASSISTANT in [r.kind for r in model.rows], timeout=TURN)
    said = last_user_text(fake.requests[-1])
    assert "12:00:35 worker 2375 ok" in said and "attachments/desktop_test/Pasted_text_" in said
    assert "\n".join(p.doc.toPlainText() for p in window.view.row_layout(0).docs) == "anything wrong?"


async def test_a_200_kb_paste_reaches_the_model_as_a_workspace_file(window: ChatWindow, bridge: CoreBridge,
                                                                    fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    big = "x" * 200_000
    paste_text(qtbot, window, big)
    await until(lambda: window.composer.attachments, message="the paste attached")
    assert window.composer.chips.itemAt(0).widget().name.text() == "Pasted text, 1 line  ▾"
    fake.add({"content": "A lot of x."})
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)  # attachments alone can be sent
    model = window.models[window.current_key]
    await until(lambda: not model.busy and Kind.ASSISTANT in [r.kind for r in model.rows], timeout=TURN)
    said = last_user_text(fake.requests[-1])
    assert big not in said and "read the parts you need" in said
    copies = list((bridge.core.workspace / "attachments" / "desktop_test").glob("Pasted_text_*.txt"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [big]


def chip_names(window: ChatWindow, row: int) -> list[str]:
    """The names on a message's attachment chips, as drawn."""
    return [op.text for op in window.view.row_layout(row).ops if isinstance(op, _Label) and op.text.startswith("▪ ")]


async def test_a_sent_attachment_keeps_the_name_it_was_sent_with_after_a_restart(
        window: ChatWindow, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A pasted text and a file whose name has spaces are copied into the workspace under plainer names; the
    message names them as they were sent, live and when the chat is read again from its file."""
    paste_text(qtbot, window, "x\n" * 200)
    await until(lambda: window.composer.attachments, message="the paste attached")
    report = tmp_path / "Sales report (final).csv"
    report.write_text("month,total\njan,120\n", encoding="utf-8")
    window.composer.add_files([str(report)])
    await until(lambda: len(window.composer.attachments) == 2, message="the file attached")
    pasted = Path(window.composer.attachments[0]).name
    assert pasted.startswith("Pasted text ")
    fake.add({"content": "Read both."})
    qtbot.keyClicks(window.composer.input, "both files")
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models[window.current_key]
    await until(lambda: not model.busy and Kind.ASSISTANT in [r.kind for r in model.rows], timeout=TURN)
    live = chip_names(window, 0)
    assert live == [f"▪ {pasted}", "▪ Sales report (final).csv"]

    restarted = ChatWindow(bridge)  # rows read from the saved messages, as after a restart
    qtbot.addWidget(restarted)
    restarted.resize(900, 640)
    restarted.show()
    restarted.show_session(window.current_key)
    await until(lambda: restarted.models[window.current_key].loaded, message="read again")
    assert chip_names(restarted, 0) == live
    copies = sorted(p.name for p in (bridge.core.workspace / "attachments" / "desktop_test").iterdir())
    assert copies == ["Pasted_text_" + pasted.removeprefix("Pasted text ").replace(" ", "_"),
                      "Sales_report_final_.csv"]  # what the model's tools read: plain names


async def test_a_long_message_folds_with_show_more(window: ChatWindow, fake: FakeOpenAI,
                                                   qtbot) -> None:  # type: ignore[no-untyped-def]
    typed = "\n".join(f"point {i}" for i in range(1, 61))
    fake.add({"content": "Noted."})
    window.composer.input.setPlainText(typed)
    qtbot.keyClick(window.composer.input, Qt.Key.Key_Return)
    model = window.models[window.current_key]
    await until(lambda: not model.busy and Kind.ASSISTANT in [r.kind for r in model.rows], timeout=TURN)
    window.view.viewport().repaint()
    shown = "\n".join(p.doc.toPlainText() for p in window.view.row_layout(0).docs)
    assert shown.startswith("point 1\n") and "point 12" in shown and "point 13" not in shown
    folded = window.view.row_rect(0).height()
    window.grab().save(str(SHOTS / "bubble-folded.png"))
    rect = window.view.control_rect(0, "toggle")
    assert rect is not None
    qtbot.mouseClick(window.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    window.view.viewport().repaint()
    assert "point 60" in "\n".join(p.doc.toPlainText() for p in window.view.row_layout(0).docs)
    assert window.view.row_rect(0).height() > folded + 200
    assert last_user_text(fake.requests[-1]) == typed  # the model had it whole all along


class _AnswersOnce(QMimeData):
    """A clipboard owner that gives its text to the first request and nothing to the next (xsel did, in a walk
    through the app: the long paste became an empty chip)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text

    def hasText(self) -> bool:  # noqa: N802
        return True

    def text(self) -> str:
        given, self._text = self._text, ""
        return given


async def test_a_long_paste_is_read_once_so_its_chip_is_never_empty(window: ChatWindow) -> None:
    log = "\n".join(f"line {i}" for i in range(300))
    window.composer.input.insertFromMimeData(_AnswersOnce(log))
    await until(lambda: window.composer.attachments, message="the long paste attached")
    assert Path(window.composer.attachments[0]).read_text(encoding="utf-8") == log


async def test_a_pdfs_chip_in_the_message_box_says_its_pages(window: ChatWindow, tmp_path: Path) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(pdf(["One.", "Two.", "Three."]))
    window.composer.add_files([str(report)])
    await until(lambda: "report.pdf · 3 pages" in [label.text() for label in window.composer.findChildren(QLabel)],
                message="pages counted")


async def test_an_attached_files_path_that_spells_markup_shows_on_hover_as_words_and_loads_no_file(
        window: ChatWindow, bridge: CoreBridge, qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A chip's tooltip is the attached file's whole path, and a sandboxed command names the folders: spelling
    <img src="/a/pipe"> across them, the tooltip read it as markup, and Qt read the file it named as the tooltip
    was shown (a named pipe froze the app for good). It shows the path as words."""
    pipe = tmp_path / "pipe"
    folders = bridge.core.workspace / '<img src="' / str(pipe).strip("/")
    folders = folders.parent / (folders.name + '">')
    folders.mkdir(parents=True)
    attached = folders / "notes.txt"
    attached.write_text("notes\n")
    with watched_pipe(pipe) as opened:
        window.composer.add_files([str(attached)])
        chip = window.composer.chips.itemAt(0).widget()
        window.composer.grab()  # laid out and painted, as on screen
        tip = hover_tip(chip)
        window.composer.clear_attachments()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tip == str(attached)
    assert opened == [], "the chip's tooltip read the pipe its path named"


async def test_an_attached_file_named_as_markup_is_named_on_its_chip_as_words_and_loads_no_file(
        window: ChatWindow, bridge: CoreBridge, tmp_path: Path) -> None:
    """A chip names the attached file, and a sandboxed command names files in the workspace: one named
    <img src="&#47;a&#47;pipe">.txt (a name has no slash; the entity spells one) was read as markup on its chip,
    and Qt read the file it named as the chip was shown (a named pipe froze the app for good). The chip names it
    in words."""
    pipe = tmp_path / "pipe"
    spelled = str(pipe).replace("/", "&#47;")
    names = [f'<img src="{spelled}">.txt', f"<IMG SRC='{spelled}'>.txt"]
    for name in names:
        (bridge.core.workspace / name).write_text("notes\n")
    with watched_pipe(pipe) as opened:
        window.composer.add_files([str(bridge.core.workspace / name) for name in names])
        window.composer.grab()  # laid out and painted, as on screen
        chips = [window.composer.chips.itemAt(i).widget() for i in range(len(names))]
        shown = [chip.name.text() for chip in chips]
        window.composer.clear_attachments()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert shown == names
    assert opened == [], "a chip read the pipe its file's name named"

"""The chat window's "Made in this chat" column, with real turns of the scripted model writing files through the
file tools and `exec` in the real workspace: the list (newest first, following undo), the preview of Markdown,
a picture, code and HTML (as text), Open (refused for a script), Show in folder and Attach to my next message."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, Qt, QUrl
from PySide6.QtGui import QColor, QImage, QTextCursor
from PySide6.QtWidgets import QSplitter

from desktop.checkpoints import Checkpoints
from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from desktop.ui.checkpoints.made import MadePanel
from desktop.ui.checkpoints.panel import ChangesPanel
from tests.fakeserver import FakeOpenAI
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip, until

TURN = 90  # seconds: the first model call imports litellm, slow on a loaded machine
SHOTS = os.environ.get("CHECKPOINTS_SCREENSHOTS")
REPORT = "# Weekly report\n\nAll **done**.\n\n![chart](../../outside.png)\n"
CODE = "def tidy(notes):\n    return sorted(notes)\n"
PAGE = "<html><body><script>alert('hi')</script><p>Hello</p></body></html>\n"


def png() -> str:
    image = QImage(40, 20, QImage.Format.Format_RGB32)
    image.fill(QColor("#3366cc"))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QBuffer.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return base64.b64encode(bytes(data.data())).decode()


async def window_with_column(bridge: CoreBridge, qtbot: Any) -> tuple[ChatWindow, MadePanel]:
    checkpoints = bridge.core.get(Checkpoints)
    made = ChatWindow(bridge, [lambda: ChangesPanel(checkpoints, bridge), lambda: MadePanel(checkpoints, bridge)])
    qtbot.addWidget(made)
    made.resize(1100, 700)
    made.show()
    made.show_session("desktop:test")
    await until(lambda: made.models["desktop:test"].loaded)
    found = made.findChild(MadePanel)
    assert found is not None
    return made, found


async def turn(bridge: CoreBridge, window: ChatWindow, fake: FakeOpenAI, asked: str, *calls: dict[str, Any]) -> None:
    checkpoints = bridge.core.get(Checkpoints)
    before = len(checkpoints.turns_of(window.current_key))
    fake.add({"tool_calls": list(calls)}, {"content": "Done."})
    bridge.send(window.current_key, asked)
    await until(lambda: len(checkpoints.turns_of(window.current_key)) > before, timeout=TURN, message=asked)


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "write_file", "arguments": {"path": path, "content": content}}


def run(command: str) -> dict[str, Any]:
    return {"name": "exec", "arguments": {"command": command}}


async def pick(column: MadePanel, path: str) -> None:
    files = column.side.files
    rows = [files.item(n).data(Qt.ItemDataRole.UserRole) for n in range(files.count())]
    files.setCurrentRow(rows.index(path))
    await until(lambda: column.side.folder_button.isEnabled() and column.side.preview.shown is not None
                and column.side.preview.shown.path == path, message=f"the preview of {path}")


async def test_the_column_lists_what_the_turns_made_and_previews_it(bridge: CoreBridge, fake: FakeOpenAI,
                                                                   qtbot: Any, tmp_path: Path) -> None:
    window, column = await window_with_column(bridge, qtbot)
    ws = bridge.core.workspace
    (ws / "notes.md").write_text("mine\n")
    await turn(bridge, window, fake, "write the weekly report", write("reports/week.md", REPORT),
               run(f"echo {png()} | base64 -d > chart.png && echo more >> notes.md"))
    await turn(bridge, window, fake, "make a tidy script", write("tidy.py", CODE), write("page.html", PAGE),
               run("printf '#!/bin/sh\\necho hi\\n' > run.sh"))

    assert not column.side.isVisible()
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    side = column.side
    assert side.isVisible() and side.width() >= 240
    listed = [side.files.item(n).text().splitlines() for n in range(side.files.count())]
    assert listed == [["page.html", "new · by “make a tidy script”"], ["run.sh", "new · by “make a tidy script”"],
                      ["tidy.py", "new · by “make a tidy script”"], ["chart.png", "new · by “write the weekly report”"],
                      ["notes.md", "changed · by “write the weekly report”"],
                      ["reports/week.md", "new · by “write the weekly report”"]]

    preview = side.preview
    await pick(column, "reports/week.md")
    assert preview.stack.currentWidget() is preview.markdown
    shown = preview.markdown.toPlainText()
    assert shown.startswith("Weekly report") and "All done." in shown and "**" not in shown
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / "made-markdown.png"))
    await pick(column, "chart.png")
    await until(lambda: preview.image.pixmap() is not None and not preview.image.pixmap().isNull())
    assert preview.image.image.size().toTuple() == (40, 20) and preview.stack.isVisible()
    if SHOTS:
        side.grab().save(str(Path(SHOTS) / "made-image.png"))
    await pick(column, "tidy.py")
    assert preview.stack.currentWidget() is preview.text and preview.text.toPlainText() == CODE
    cursor = QTextCursor(preview.text.document())
    cursor.setPosition(1)  # inside "def"
    assert cursor.charFormat().foreground().style() != Qt.BrushStyle.NoBrush  # in a colour of its own
    await pick(column, "page.html")
    assert preview.text.toPlainText() == PAGE and preview.stack.currentWidget() is preview.text  # the source
    assert side.open_button.isEnabled() and not side.refused.isVisible()
    window.grab().save(str(tmp_path / "column.png"))
    if SHOTS:
        window.grab().save(str(Path(SHOTS) / "made-column.png"))

    # The undo of the newest turn takes its files off the list.
    strip = window.findChild(ChangesPanel)
    assert strip is not None
    newest = strip.rows[bridge.core.get(Checkpoints).turns_of(window.current_key)[-1].id]
    qtbot.mouseClick(newest.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: side.files.count() == 3, timeout=TURN, message="the list after the undo")
    assert side.files.item(0).data(Qt.ItemDataRole.UserRole) == "chart.png"


async def test_open_refuses_a_script_and_attach_puts_the_file_in_the_message_box(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any) -> None:
    window, column = await window_with_column(bridge, qtbot)
    ws = bridge.core.workspace
    await turn(bridge, window, fake, "make files", write("summary.md", "# Summary\n"),
               run("printf '#!/bin/sh\\necho hi\\n' > run.sh && printf 'no suffix' > tool && chmod +x tool"))
    opened: list[QUrl] = []
    column.open_url = opened.append
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    side = column.side

    await pick(column, "run.sh")
    assert not side.open_button.isEnabled() and side.refused.isVisible()
    assert side.refused.text() == ("Open is off for run.sh: it is a script (.sh), and opening it could run it. "
                                   "Show in folder lets you look at it.")
    await pick(column, "tool")
    assert not side.open_button.isEnabled()
    assert side.refused.text().startswith("Open is off for tool: it is marked executable")
    qtbot.mouseClick(side.folder_button, Qt.MouseButton.LeftButton)
    await until(lambda: opened, message="Show in folder")
    assert opened == [QUrl.fromLocalFile(str(ws))]

    await pick(column, "summary.md")
    assert side.open_button.isEnabled()
    (ws / "summary.md").write_text("#!/bin/sh\nrm -rf ~\n")  # became a script after its preview was read
    qtbot.mouseClick(side.open_button, Qt.MouseButton.LeftButton)
    await until(lambda: side.refused.isVisible(), message="Open looked again")
    assert "it is a script (by its first bytes)" in side.refused.text() and len(opened) == 1
    (ws / "summary.md").write_text("# Summary\n")
    await pick(column, "run.sh")
    await pick(column, "summary.md")
    qtbot.mouseClick(side.open_button, Qt.MouseButton.LeftButton)
    await until(lambda: len(opened) == 2, message="Open")
    assert opened[-1] == QUrl.fromLocalFile(str(ws / "summary.md"))

    qtbot.mouseClick(side.attach_button, Qt.MouseButton.LeftButton)
    assert window.composer.attachments == [str(ws / "summary.md")]


async def test_the_column_keeps_its_width_fits_its_rows_and_keeps_its_heading_at_the_top(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any, tmp_path: Path) -> None:
    window, column = await window_with_column(bridge, qtbot)
    window.resize(1040, 720)  # the app's own size
    asked = "Write my garden plan to a file, with the beds, the seeds and when to sow each of them"
    await turn(bridge, window, fake, asked, write("notes/garden/plans/this-year/plan-for-the-vegetable-beds.md",
                                                  "# Garden plan\n"))
    await until(lambda: window.title.text().startswith("Write my garden plan"), message="the chat's title")
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    side = column.side
    files = side.files
    await until(lambda: files.count() == 1)
    width = side.width()
    assert width >= 300  # the long title in the header does not squeeze it

    item = files.item(0)
    assert not files.horizontalScrollBar().isVisible()
    assert files.visualItemRect(item).right() <= files.viewport().width()  # cut off at the column's edge: no
    assert item.toolTip() == item.text() and "plan-for-the-vegetable-beds.md" in item.toolTip()  # whole here
    hint = window.composer.hint
    assert hint.shown().endswith("…") and hint.toolTip() == hint.text()  # elided, not cut mid-word
    window.grab().save(str(tmp_path / "column-long.png"))

    window.new_chat()  # another chat, a short title: the column keeps its width
    await until(lambda: files.count() == 0)
    assert side.width() == width
    splitter = side.parentWidget()
    assert isinstance(splitter, QSplitter)
    edge = side.x() - splitter.handleWidth()
    splitter.moveSplitter(edge - 40, splitter.indexOf(side))  # the person drags its edge 40 px to the left
    await until(lambda: side.width() >= width + 30, message="dragged wider")
    dragged = side.width()
    window.show_session("desktop:test")
    await until(lambda: files.count() == 1)
    assert side.width() == dragged  # as the person left it
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    assert side.width() == dragged

    strip = window.findChild(ChangesPanel)  # the undo empties the list: the note right under the heading
    assert strip is not None
    newest = strip.rows[bridge.core.get(Checkpoints).turns_of(window.current_key)[-1].id]
    qtbot.mouseClick(newest.undo_button, Qt.MouseButton.LeftButton)
    await until(lambda: files.count() == 0, timeout=TURN, message="the list after the undo")
    await until(lambda: side.empty.isVisible())
    assert side.heading.y() < 20 and 0 < side.empty.y() - side.heading.y() < 40
    window.grab().save(str(tmp_path / "column-empty.png"))


async def test_a_file_a_command_named_as_markup_shows_its_name_as_words_on_hover_and_loads_no_file(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any, tmp_path: Path) -> None:
    """A sandboxed command names files as it likes: folders nested to spell <img src="/a/pipe">. The column's
    tooltip (the whole name, on hover) read it as markup, and Qt read the file it named as the tooltip was shown:
    a named pipe froze the app for good. It shows the name as it is."""
    window, column = await window_with_column(bridge, qtbot)
    pipe = tmp_path / "pipe"
    lower, upper = f'<img src="{pipe}">', f"<IMG SRC='{pipe}'>"
    command = f"mkdir -p '{lower}' \"{upper}\" && echo one > '{lower}/a.md' && echo two > \"{upper}/b.md\""
    await turn(bridge, window, fake, "make the pictures", run(command))
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    files = column.side.files
    await until(lambda: files.count() == 2, timeout=TURN)
    shown = []
    with watched_pipe(pipe) as opened:
        for row in range(2):
            item = files.item(row)
            shown.append(hover_tip(files.viewport(), files.visualItemRect(item).center()))
            assert shown[-1] == item.text()
        window.grab()
    assert sorted(line.splitlines()[0] for line in shown) == sorted([f"{lower}/a.md", f"{upper}/b.md"])
    assert opened == [], "a tooltip read the pipe a file's name pointed at"


async def test_a_file_turned_into_a_pipe_in_folders_named_as_markup_says_why_in_words_and_loads_no_file(
        bridge: CoreBridge, fake: FakeOpenAI, qtbot: Any, tmp_path: Path) -> None:
    """A file a turn made, in folders nested to spell <img src="/a/pipe">, that a later command turned into a named
    pipe is not shown, and the note under the preview says why, naming the folders: read as markup, Qt read the
    file they named as the note was shown (a named pipe froze the app for good). The note says it in words."""
    window, column = await window_with_column(bridge, qtbot)
    pipe = tmp_path / "pipe"
    lower, upper = f'<img src="{pipe}">', f"<IMG SRC='{pipe}'>"
    command = f"mkdir -p '{lower}' \"{upper}\" && echo one > '{lower}/a.md' && echo two > \"{upper}/b.md\""
    await turn(bridge, window, fake, "make the pictures", run(command))
    for made in (f"{lower}/a.md", f"{upper}/b.md"):  # as a later command could
        (bridge.workspace / made).unlink()
        os.mkfifo(bridge.workspace / made)
    qtbot.mouseClick(column.toggle, Qt.MouseButton.LeftButton)
    await until(lambda: column.side.files.count() == 2, timeout=TURN)
    notes = {}
    with watched_pipe(pipe) as opened:
        for folders, made in ((lower, f"{lower}/a.md"), (upper, f"{upper}/b.md")):
            await pick(column, made)
            window.grab()  # laid out and painted, as on screen
            notes[folders] = column.side.preview.note.text()
        column.side.preview.note.clear()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    for folders, note in notes.items():
        assert note.startswith(f"Not shown: {folders}") and "named pipe" in note, note
    assert opened == [], "the preview's note read the pipe the folders named"

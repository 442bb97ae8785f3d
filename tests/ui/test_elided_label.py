"""The one-line label that ends in "…" (the chat's title, a turn's "by …" on the Changes strip): the words it
shows are what the model chose (a reminder's name in its chat's title, a task's words), so it shows them as
words."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from desktop.ui.elided_label import ElidedLabel
from tests.pipes import watched_pipe
from tests.ui.conftest import hover_tip


def test_a_title_that_spells_markup_shows_as_words_whole_on_hover_and_loads_no_file(
        qtbot: QtBot, tmp_path: Path) -> None:
    """A chat named by a reminder the model named <img src="/a/pipe">: the label and, cut short, its tooltip read
    the name as markup, and Qt read the file it named as they were laid out: a named pipe froze the app for good."""
    pipe = tmp_path / "pipe"
    text = f"Reminder: <img src=\"{pipe}\"> and <IMG SRC='{pipe}'>"
    with watched_pipe(pipe) as opened:
        label = ElidedLabel(text)
        qtbot.addWidget(label)
        label.resize(label.fontMetrics().horizontalAdvance(text) // 2, 30)  # too narrow: it ends in "…"
        label.show()
        label.grab()  # laid out and painted, as on screen
        shown, tip = label.shown(), hover_tip(label)
        label.close()
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert shown.startswith("Reminder: <img src=") and shown.endswith("…")
    assert tip == text
    assert opened == [], "the label read the pipe its words named"

"""The transcript view itself: how it scrolls, whatever the chat holds."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt

from desktop.ui.bridge import CoreBridge
from desktop.ui.chat.window import ChatWindow
from tests.ui.conftest import until


def write_chat(bridge: CoreBridge, key: str, turns: int) -> None:
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long"})]
    for i in range(turns):
        lines += [json.dumps({"role": "user", "content": f"question {i}"}),
                  json.dumps({"role": "assistant", "content": f"answer {i}"})]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


async def test_an_empty_chat_shows_no_scrollbar_after_a_long_one(window: ChatWindow, bridge: CoreBridge, qtbot,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path) -> None:
    write_chat(bridge, "desktop:long", 60)
    window.show_session("desktop:long")
    await until(lambda: window.models["desktop:long"].loaded)
    window.resize(900, 660)  # as a window manager places it: the scroll area lays out its bars again
    bar = window.view.verticalScrollBar()
    await until(lambda: bar.isVisible(), message="the long chat scrolls")

    qtbot.mouseClick(window.sidebar.new_button, Qt.MouseButton.LeftButton)
    assert window.models[window.current_key].rowCount() == 0
    await until(lambda: not bar.isVisible(), timeout=5, message="the scrollbar to go")  # nothing to scroll
    assert bar.maximum() == 0
    window.grab().save(str(tmp_path / "empty-chat.png"))


def _green_pixels(window: ChatWindow) -> int:
    """Pixels of the light scheme's keyword green in the transcript as drawn."""
    image = window.view.viewport().grab().toImage()
    return sum(1 for y in range(0, image.height(), 2) for x in range(0, image.width(), 2)
               if (c := image.pixelColor(x, y)).green() > 100 and c.red() < 60 and c.blue() < 60)


async def test_code_in_a_language_not_shown_before_is_drawn_in_colour(window: ChatWindow, bridge: CoreBridge,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    """Its lexer is built in a thread (30 ms of regular expressions, a stall on the GUI thread); the block is
    drawn again in colour once it is."""
    key = "desktop:code"
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    answer = "Here:\n\n```haskell\nmodule Main where\nimport Data.List\nmain = do\n  let xs = [1, 2, 3]\n" \
             "  if null xs then return () else print xs\n```\n"
    Path(path).write_text("\n".join(json.dumps(line) for line in [
        {"_type": "metadata", "key": key, "title": "Code"}, {"role": "user", "content": "haskell please"},
        {"role": "assistant", "content": answer}]) + "\n", encoding="utf-8")
    window.show_session(key)
    await until(lambda: window.models[key].loaded)
    await until(lambda: _green_pixels(window) > 20, timeout=10, message="the keywords drawn in colour")
    window.grab().save(str(tmp_path / "code-in-colour.png"))


async def test_a_long_chat_scrolled_into_while_it_settles_keeps_the_row_in_view_where_it_is(  # type: ignore[no-untyped-def]
        window: ChatWindow, bridge: CoreBridge) -> None:
    key = "desktop:settling"
    path = bridge.core.sessions.path_for(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_type": "metadata", "key": key, "title": "Long"})]
    for i in range(3000):  # short questions, answers of very different lengths: heights far from their average
        lines += [json.dumps({"role": "user", "content": f"question {i}"}),
                  json.dumps({"role": "assistant", "content": "\n\n".join([f"answer {i}"] * (1 + i % 7 * 3))})]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    window.resize(900, 660)
    window.show_session(key)
    view = window.view
    await until(lambda: window.models[key].loaded, timeout=30)
    assert view.at_bottom()
    view.reveal(1000)  # the person scrolls up to an early answer before the older rows' heights are known
    top = view.row_rect(1000).top()
    await until(lambda: view._unestimated == 0, timeout=10, message="the older rows' heights estimated")
    assert abs(view.row_rect(1000).top() - top) <= 1  # the answer read stays where it was on screen
    view.verticalScrollBar().setValue(0)
    view.viewport().repaint()
    assert view.row_rect(0).top() == 0
    view.scroll_to_bottom()
    view.viewport().repaint()
    assert 0 < view.row_rect(5999).bottom() <= view.viewport().height()

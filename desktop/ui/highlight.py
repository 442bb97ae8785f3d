"""Syntax colours for fenced code in the chat, with Pygments.

Lexing is cached by (code, language), so re-laying out a row at another width or repainting it costs
nothing, and a code block still streaming is lexed once per update of its own text only. Blocks longer
than HIGHLIGHT_CHARS, and languages Pygments does not know, stay plain: the GUI thread never lexes a
huge block. The colour scheme follows the palette: a light style on light bases, a dark one on dark.

A language's first block builds its Pygments lexer (tens of regular expressions compiled: 30 ms for Python),
which is done in a thread while the event loop runs: the block shows plain until `lexers.ready` says its
colours can be drawn, and views showing code draw it again then."""

from __future__ import annotations

import asyncio
import threading
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QColor, QFont, QPalette, QTextCharFormat, QTextCursor, QTextDocument

from desktop.ui.gil import gui_first

HIGHLIGHT_CHARS = 5_000  # about 10 ms of lexing: beyond that a block stays plain
LIGHT_STYLE, DARK_STYLE = "default", "github-dark"

Spans = tuple[tuple[str, Any], ...]  # (text, Pygments token type), in order; joined they are the code


class Lexers(QObject):
    """Says when a language's lexer is built: code in it shown plain meanwhile can be drawn in colour."""

    ready = Signal(str)  # the language, lower case


lexers = Lexers()
_built: set[str] = set()  # languages whose lexer is built (or that Pygments does not know)
_building: dict[str, asyncio.Future[None]] = {}
_one_at_a_time = threading.Lock()  # Pygments builds a lexer class's tables unguarded


def ready(language: str) -> bool:
    """Whether code in `language` can be coloured now, without building a lexer on the GUI thread. If not, the
    lexer is being built in a thread; outside an event loop (a script) it is built here, at once."""
    name = language.lower()
    if name in _built:
        return True
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        _build(name)
        return True
    prepare(name)
    return False


def prepare(language: str) -> asyncio.Future[None]:
    """The lexer of `language` built in a thread (once); `lexers.ready` is emitted when it is."""
    name = language.lower()
    future = _building.get(name)
    if future is None:
        future = _building[name] = asyncio.ensure_future(_build_in_thread(name))
    return future


async def _build_in_thread(name: str) -> None:
    with gui_first():  # the build is pure Python: the window's slots must not queue behind it for the GIL
        await asyncio.to_thread(_build, name)
    lexers.ready.emit(name)


def _build(name: str) -> None:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound
    with _one_at_a_time:
        if name not in _built:
            try:
                get_lexer_by_name(name)  # the class keeps the tables its first instance built
            except ClassNotFound:
                pass
            for style in (LIGHT_STYLE, DARK_STYLE):
                _style(style)
            _built.add(name)


def token_spans(code: str, language: str) -> Spans | None:
    """The code cut into coloured runs, or None when it stays plain (unknown language, too long, its lexer
    still being built)."""
    if not language or not code or len(code) > HIGHLIGHT_CHARS or not ready(language):
        return None
    return _spans(code, language)


@lru_cache(maxsize=256)
def _spans(code: str, language: str) -> Spans | None:
    from pygments.lexers import get_lexer_by_name  # late: Pygments loads only when code is shown
    from pygments.util import ClassNotFound
    try:
        lexer = get_lexer_by_name(language.lower(), stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None
    spans: list[tuple[str, Any]] = []
    for kind, text in lexer.get_tokens(code):
        if spans and spans[-1][1] is kind:
            spans[-1] = (spans[-1][0] + text, kind)
        else:
            spans.append((text, kind))
    return tuple(spans)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


@lru_cache(maxsize=4)
def _style(name: str) -> Any:
    from pygments.styles import get_style_by_name
    return get_style_by_name(name)


@lru_cache(maxsize=1024)
def _format(style_name: str, kind: Any) -> QTextCharFormat | None:
    """The char format for a token type; None where the style leaves it in the text colour."""
    entry = _style(style_name).style_for_token(kind)
    if not (entry["color"] or entry["bold"] or entry["italic"]):
        return None
    fmt = QTextCharFormat()
    if entry["color"]:
        fmt.setForeground(QColor(f"#{entry['color']}"))
    if entry["bold"]:
        fmt.setFontWeight(QFont.Weight.Bold)
    if entry["italic"]:
        fmt.setFontItalic(True)
    return fmt


def highlight(doc: QTextDocument, code: str, language: str, palette: QPalette) -> bool:
    """Fill an empty document with the code in colour; False (document untouched) when it stays plain."""
    spans = token_spans(code, language)
    if spans is None:
        return False
    style_name = DARK_STYLE if is_dark(palette) else LIGHT_STYLE
    plain = QTextCharFormat()
    cursor = QTextCursor(doc)
    cursor.beginEditBlock()
    for text, kind in spans:
        cursor.insertText(text, _format(style_name, kind) or plain)
    cursor.endEditBlock()
    return True

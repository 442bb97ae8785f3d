"""Markdown for the chat view, as Qt text documents.

A message is cut into blocks: fenced code (drawn by the view in a box with a Copy button) and prose
(rendered by Qt's own Markdown importer). Prose is further cut at blank lines into pieces of a
bounded size, so while an answer streams only its last piece is parsed and laid out again."""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtGui import (
    QColor,
    QFont,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)

PIECE_CHARS = 1200  # prose piece size: bounds the re-render work per streamed update
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEADING_SIZE = {1: 2, 2: 1}  # QTextCharFormat font size adjustment; smaller than Qt's document defaults


@dataclass(frozen=True)
class Prose:
    text: str


@dataclass(frozen=True)
class Code:
    code: str
    language: str


Block = Prose | Code


def split_blocks(text: str, piece_chars: int = PIECE_CHARS) -> list[Block]:
    """Fenced code blocks and prose pieces, in order. An unclosed fence (still streaming) runs to the end.

    Cut points depend only on the text before them, so a growing text keeps its earlier blocks."""
    blocks: list[Block] = []
    prose: list[str] = []
    fence: tuple[str, int, str] | None = None  # (fence char, length, indent) of the open code block
    language = ""
    code: list[str] = []

    def flush_prose() -> None:
        piece: list[str] = []
        size = 0
        for paragraph in "\n".join(prose).split("\n\n"):
            if piece and size >= piece_chars:
                blocks.append(Prose("\n\n".join(piece)))
                piece, size = [], 0
            piece.append(paragraph)
            size += len(paragraph) + 2
        joined = "\n\n".join(piece)
        if joined.strip():
            blocks.append(Prose(joined))
        prose.clear()

    for line in text.split("\n"):
        if fence is None:
            match = _FENCE.match(line)
            if match:
                flush_prose()
                indent, marks, language = match.groups()
                fence = (marks[0], len(marks), indent)
                code = []
            else:
                prose.append(line)
            continue
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= fence[1]:
            blocks.append(Code("\n".join(code), language))
            fence = None
        else:
            code.append(line[len(fence[2]):] if line.startswith(fence[2]) else line.lstrip())
    if fence is not None:
        blocks.append(Code("\n".join(code), language))
    flush_prose()
    return blocks


def mix(a: QColor, b: QColor, amount: float) -> QColor:
    """`a` blended towards `b` by `amount` (0..1): tints that follow light and dark palettes."""
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * amount,
                           a.greenF() + (b.greenF() - a.greenF()) * amount,
                           a.blueF() + (b.blueF() - a.blueF()) * amount)


def prose_document(text: str, font: QFont, palette: QPalette, width: float) -> QTextDocument:
    """Rendered Markdown (GitHub dialect), laid out at `width`."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    _polish(doc, text, palette)
    _trim_outer_margins(doc)
    doc.setTextWidth(width)
    return doc


def plain_document(text: str, font: QFont, width: float, *, code: bool = False) -> QTextDocument:
    """Text shown as is (code, tool arguments and results, reasoning); code wraps anywhere."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    if code:
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(option)
    doc.setPlainText(text)
    doc.setTextWidth(width)
    return doc


def code_font(base: QFont) -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    font.setPointSizeF(max(base.pointSizeF() - 0.5, 7.0))
    return font


def _polish(doc: QTextDocument, text: str, palette: QPalette) -> None:
    """Modest headings and tinted inline code. (Links already take the application palette's colour.)"""
    inline_code: QTextCharFormat | None = None
    if "`" in text:  # the fragment walk is the costly part; most pieces have no inline code
        inline_code = QTextCharFormat()
        inline_code.setBackground(mix(palette.color(QPalette.ColorRole.Base),
                                      palette.color(QPalette.ColorRole.Text), 0.09))
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            fmt = block.blockFormat()
            fmt.setTopMargin(10)
            fmt.setBottomMargin(4)
            cursor = QTextCursor(block)
            cursor.setBlockFormat(fmt)
            size = QTextCharFormat()
            size.setProperty(QTextCharFormat.Property.FontSizeAdjustment, _HEADING_SIZE.get(level, 0))
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(size)
        if inline_code is not None:
            fragments = block.begin()
            while not fragments.atEnd():
                fragment = fragments.fragment()
                if fragment.charFormat().fontFixedPitch():
                    cursor = QTextCursor(doc)
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                    cursor.mergeCharFormat(inline_code)
                fragments += 1
        block = block.next()


def _trim_outer_margins(doc: QTextDocument) -> None:
    """No paragraph margin above the first or below the last block: the view owns row spacing."""
    first = doc.firstBlock().blockFormat()
    first.setTopMargin(0)
    QTextCursor(doc.firstBlock()).setBlockFormat(first)
    last = doc.lastBlock().blockFormat()
    last.setBottomMargin(0)
    QTextCursor(doc.lastBlock()).setBlockFormat(last)

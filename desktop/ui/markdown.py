"""Markdown for the chat view, as Qt text documents.

A message is cut into blocks: fenced code (drawn by the view in a box with a Copy button) and prose
(rendered by Qt's own Markdown importer). Prose is further cut at blank lines into pieces of a
bounded size, so while an answer streams only its last piece is parsed and laid out again. Code is
coloured by desktop.ui.highlight; block quotes get a bar drawn by the view (quote_bars).

The Markdown comes from the model and from workspace files, so a rendered document reads no file by itself
(ProseDocument, MarkdownBrowser): Qt's own default opens whatever local path an image names, on the GUI
thread, where a named pipe hangs the app and a link leads anywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QRectF, QUrl
from PySide6.QtGui import (
    QColor,
    QFont,
    QImage,
    QImageReader,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextOption,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from desktop.ui.highlight import highlight
from desktop.workspace import access

IMAGE_LIMIT = 10 * 1024 * 1024  # a picture in a skill's folder larger than this is not shown
MAX_PICTURES = 40  # looked at per document
MAX_PICTURE_PIXELS = 16_000_000  # shown per document, in all (64 MB decoded)
PIECE_CHARS = 1200  # prose piece size: bounds the re-render work per streamed update
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEADING_SCALE = {1: 1.3, 2: 1.16, 3: 1.06}  # of the body size: a chat column, not a page (Qt: 2x, 1.5x)
QUOTE_INDENT = 14.0  # left margin per quote level; the bar sits in it


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


class ProseDocument(QTextDocument):
    """A document that loads no file by itself. Pictures come only from `images`, a folder given as
    (root, path inside it) and read through desktop.workspace.access: relative names, inside that folder.
    Any other picture gets an empty one, never nothing: given nothing, Qt opens the path itself.

    The Markdown may be a workspace file, which can name a picture thousands of times, each name a little
    different (`a.png?1`, `a.png?2`...), and Qt decodes each on the GUI thread: so a document looks at no more
    than MAX_PICTURES and shows no more than MAX_PICTURE_PIXELS in all; past either a picture is left blank."""

    def __init__(self, images: tuple[Path, str] | None = None) -> None:
        super().__init__()
        self.images = images
        self._pictures_left = MAX_PICTURES
        self._pixels_left = MAX_PICTURE_PIXELS

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 - Qt's name
        if kind != QTextDocument.ResourceType.ImageResource.value:
            return None
        if self.images is None or self._pictures_left <= 0:
            return _image(None, QUrl(name))
        self._pictures_left -= 1
        image = _image(self.images, QUrl(name), self._pixels_left)
        self._pixels_left -= image.width() * image.height()
        return image


class MarkdownBrowser(QTextBrowser):
    """A QTextBrowser that loads no file by itself (its `setMarkdown` would read any path a picture names) and follows
    no link: a click is only `anchorClicked`, for its owner to pass to desktop/ui/links.py or to ignore."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)

    def loadResource(self, kind: int, name: QUrl | str) -> Any:  # noqa: N802 - Qt's name
        return _image(None, QUrl(name)) if kind == QTextDocument.ResourceType.ImageResource.value else None


def _image(images: tuple[Path, str] | None, name: QUrl, pixels: int = 0) -> QImage:
    """The picture `name` names in the `images` folder, if it has no more than `pixels` (told by its header,
    before it is decoded); otherwise a blank one."""
    relative = name.path()
    if images is not None and name.scheme() in ("", "file") and relative and not relative.startswith("/"):
        root, folder = images
        try:
            data = access.read_bytes(root, f"{folder}/{relative}" if folder else relative, IMAGE_LIMIT)
        except OSError:
            data = b""
        buffer = QBuffer()
        buffer.setData(QByteArray(data))
        reader = QImageReader(buffer)
        size = reader.size()
        if size.isValid() and size.width() * size.height() <= pixels:
            image = reader.read()
            if not image.isNull():
                return image
    blank = QImage(1, 1, QImage.Format.Format_ARGB32)
    blank.fill(0)
    return blank


# A single line break inside a paragraph is kept as a break, as chat apps show it ("Shopping list:⏎milk⏎eggs" is
# three lines, not one): Markdown would join the lines. At the end of a block (a list item, a heading) a hard
# break is ignored, so lists and tables are unchanged; code blocks never come here (split_blocks).
_SOFT_BREAK = re.compile(r"(?<=[^\n])[ \t]*\n(?=[^\n])")


def prose_document(text: str, font: QFont, palette: QPalette, width: float,
                   images: tuple[Path, str] | None = None) -> QTextDocument:
    """Rendered Markdown (GitHub dialect), laid out at `width`; pictures only from `images` (see
    ProseDocument)."""
    doc = ProseDocument(images)
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    doc.setMarkdown(_SOFT_BREAK.sub("  \n", text), QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    _polish(doc, text, palette)
    _trim_outer_margins(doc)
    doc.setTextWidth(width)
    return doc


def plain_document(text: str, font: QFont, width: float) -> QTextDocument:
    """Text shown as is (the person's messages, reasoning, error details); a word longer than the line (a path,
    a link) breaks rather than running out of its box."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    doc.setPlainText(text)
    doc.setTextWidth(width)
    return doc


def code_document(code: str, language: str, font: QFont, palette: QPalette, width: float) -> QTextDocument:
    """Code in colour where its language is known, wrapping anywhere rather than running off the box."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(0)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    if not highlight(doc, code, language, palette):
        doc.setPlainText(code)
    doc.setTextWidth(width)
    return doc


def quote_bars(doc: QTextDocument) -> list[QRectF]:
    """Where the bars of block quotes go, in document coordinates: one per run of quoted blocks and level."""
    bars: list[QRectF] = []
    layout = doc.documentLayout()
    block = doc.begin()
    previous = 0
    while block.isValid():
        level = block.blockFormat().property(QTextFormat.Property.BlockQuoteLevel) or 0
        rect = layout.blockBoundingRect(block)
        for depth in range(1, level + 1):
            x = (depth - 1) * QUOTE_INDENT
            if depth <= previous:  # the same quote goes on: stretch its bar down
                bar = next(b for b in reversed(bars) if b.x() == x)
                bar.setBottom(rect.bottom())
            else:
                bars.append(QRectF(x, rect.top(), 3, rect.height()))
        previous = level
        block = block.next()
    return bars


def code_font(base: QFont) -> QFont:
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    font.setPointSizeF(max(base.pointSizeF() - 0.5, 7.0))
    return font


def _polish(doc: QTextDocument, text: str, palette: QPalette) -> None:
    """Modest headings, slim quote indents and tinted inline code. (Links already take the palette's colour.)"""
    inline_code: QTextCharFormat | None = None
    if "`" in text:  # the fragment walk is the costly part; most pieces have no inline code
        inline_code = QTextCharFormat()
        inline_code.setBackground(mix(palette.color(QPalette.ColorRole.Base),
                                      palette.color(QPalette.ColorRole.Text), 0.09))
    body_size = doc.defaultFont().pointSizeF()
    block = doc.begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level:
            fmt = block.blockFormat()
            fmt.setTopMargin(10 if level <= 2 else 8)
            fmt.setBottomMargin(4)
            cursor = QTextCursor(block)
            cursor.setBlockFormat(fmt)
            size = body_size * _HEADING_SCALE.get(level, 1.0)
            fragments = block.begin()
            while not fragments.atEnd():  # per fragment, to keep inline code and links in headings
                fragment = fragments.fragment()
                heading = fragment.charFormat()
                heading.clearProperty(QTextFormat.Property.FontSizeAdjustment)  # it would override the size
                if size > 0:
                    heading.setFontPointSize(size)
                heading.setFontWeight(QFont.Weight.Bold)
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(heading)
                fragments += 1
        quoted = block.blockFormat().property(QTextFormat.Property.BlockQuoteLevel)
        if quoted:
            fmt = block.blockFormat()
            fmt.setLeftMargin(quoted * QUOTE_INDENT)
            fmt.setRightMargin(0)
            QTextCursor(block).setBlockFormat(fmt)
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

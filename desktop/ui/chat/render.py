"""How each transcript row looks: layout (cached by row version and width) and painting.

This plays the part of an item delegate for MessageView. A layout is a list of drawing operations
plus hotspots (Copy, Retry, expand), so painting and clicking never re-measure anything."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Protocol

from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPalette,
    QTextDocument,
)

from desktop.agent.attachments import is_image
from desktop.conversation.transcript import (
    CUT_OFF,
    ChatRow,
    Kind,
    attachment_names,
    format_arguments,
    tool_summary,
)
from desktop.ui.chat.thumbnails import SIZE as THUMBNAIL
from desktop.ui.chat.thumbnails import Thumbnails
from desktop.ui.markdown import (
    Code,
    Prose,
    code_document,
    code_font,
    mix,
    plain_document,
    prose_document,
    quote_bars,
    split_blocks,
)

RESULT_SHOWN = 20_000  # characters of a tool result drawn when expanded; Copy takes the whole text
BUBBLE_SHARE = 0.8      # user bubbles use at most this share of the column
FOLD_LINES = 12         # a long message of the person's shows this many lines until "Show more"
FOLD_CHARS = 1200       # ... or this many characters, whichever ends first
GOOD = QColor("#2f9e55")
BAD = QColor("#d9463e")


@dataclass
class Hotspot:
    rect: QRectF
    action: str  # "toggle", "copy", "retry"
    key: str     # unique within the row: hover and "Copied" feedback
    payload: str = ""


@dataclass
class Colors:
    text: QColor
    muted: QColor
    base: QColor
    bubble: QColor
    box: QColor
    box_header: QColor
    border: QColor
    error_fill: QColor
    error_border: QColor
    button: QColor
    button_hover: QColor
    accent: QColor
    quote_bar: QColor

    @classmethod
    def of(cls, palette: QPalette) -> Colors:
        role = QPalette.ColorRole
        base, text = palette.color(role.Base), palette.color(role.Text)
        accent = palette.color(role.Highlight)
        return cls(text=text, muted=mix(text, base, 0.45), base=base, bubble=mix(base, accent, 0.16),
                   box=mix(base, text, 0.045), box_header=mix(base, text, 0.085), border=mix(base, text, 0.16),
                   error_fill=mix(base, BAD, 0.1), error_border=mix(base, BAD, 0.55),
                   button=base, button_hover=mix(base, text, 0.12), accent=accent,
                   quote_bar=mix(base, text, 0.35))


class _Op(Protocol):
    def paint(self, painter: QPainter, state: PaintState) -> None: ...


@dataclass
class PaintState:
    colors: Colors
    clip: QRectF            # exposed area in row coordinates
    hover: str | None = None
    copied: str | None = None
    skip: QTextDocument | None = None  # drawn by the text selector laid over it
    marks: dict[int, list[QAbstractTextDocumentLayout.Selection]] | None = None  # find hits, by id() of their doc
    thumbnails: Thumbnails | None = None  # attached pictures, drawn once read


@dataclass
class _Box:
    rect: QRectF
    fill: QColor | None
    border: QColor | None = None
    radius: float = 8.0

    def paint(self, painter: QPainter, state: PaintState) -> None:
        painter.setPen(self.border if self.border is not None else Qt.PenStyle.NoPen)
        painter.setBrush(self.fill if self.fill is not None else Qt.BrushStyle.NoBrush)
        painter.drawRoundedRect(self.rect.adjusted(0.5, 0.5, -0.5, -0.5), self.radius, self.radius)


@dataclass
class _Doc:
    doc: QTextDocument
    pos: QPointF
    color: QColor

    def paint(self, painter: QPainter, state: PaintState) -> None:
        if self.doc is state.skip:
            return
        painter.save()
        painter.translate(self.pos)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, self.color)
        context.clip = state.clip.translated(-self.pos)
        if state.marks:
            context.selections = state.marks.get(id(self.doc), [])
        self.doc.documentLayout().draw(painter, context)
        painter.restore()


@dataclass
class _Label:
    rect: QRectF
    text: str
    font: QFont
    color: QColor
    align: Qt.AlignmentFlag = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

    def paint(self, painter: QPainter, state: PaintState) -> None:
        painter.setFont(self.font)
        painter.setPen(self.color)
        painter.drawText(self.rect, int(self.align), self.text)


@dataclass
class _Picture:
    """An attached picture's thumbnail in its slot; its name in a box until it has been read (or if it cannot be)."""

    rect: QRectF
    path: str
    font: QFont

    def paint(self, painter: QPainter, state: PaintState) -> None:
        image = state.thumbnails.get(self.path) if state.thumbnails is not None else None
        if image is None:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(state.colors.box_header)
            painter.drawRoundedRect(self.rect, 6, 6)
            painter.setFont(self.font)
            painter.setPen(state.colors.muted)
            name = self.path.replace("\\", "/").rsplit("/", 1)[-1]
            flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWrapAnywhere
            painter.drawText(self.rect.adjusted(8, 0, -8, 0), int(flags), name)
            return
        size = QSizeF(image.size()).scaled(self.rect.size(), Qt.AspectRatioMode.KeepAspectRatio)
        if size.width() > image.width():  # a small picture keeps its size
            size = QSizeF(image.size())
        painter.drawImage(QRectF(self.rect.topLeft(), size), image)


@dataclass
class _Button:
    rect: QRectF
    label: str
    key: str
    font: QFont
    done_label: str = ""

    def paint(self, painter: QPainter, state: PaintState) -> None:
        colors = state.colors
        painter.setPen(colors.border)
        painter.setBrush(colors.button_hover if state.hover == self.key else colors.button)
        painter.drawRoundedRect(self.rect.adjusted(0.5, 0.5, -0.5, -0.5), 5, 5)
        painter.setFont(self.font)
        painter.setPen(colors.text)
        label = self.done_label if self.done_label and state.copied == self.key else self.label
        painter.drawText(self.rect, int(Qt.AlignmentFlag.AlignCenter), label)


@dataclass
class RowLayout:
    height: float
    ops: list[_Op] = field(default_factory=list)
    hotspots: list[Hotspot] = field(default_factory=list)
    docs: list[_Doc] = field(default_factory=list)  # for links and text hit-testing
    frame: QRectF | None = None  # the message's bubble, where it has one (hover actions sit beside it)

    def paint(self, painter: QPainter, state: PaintState) -> None:
        for op in self.ops:  # each op sets the pen, brush and font it needs
            op.paint(painter, state)

    def hotspot_at(self, pos: QPointF) -> Hotspot | None:
        return next((h for h in self.hotspots if h.rect.contains(pos)), None)

    def absorb(self, inner: RowLayout) -> None:
        """Take over what a nested layout drew, painted after what this one already has."""
        self.ops += inner.ops
        self.hotspots += inner.hotspots
        self.docs += inner.docs

    def doc_at(self, pos: QPointF) -> _Doc | None:
        for placed in self.docs:
            if QRectF(placed.pos, placed.doc.size()).contains(pos):
                return placed
        return None

    def link_at(self, pos: QPointF) -> str:
        placed = self.doc_at(pos)
        return placed.doc.documentLayout().anchorAt(pos - placed.pos) if placed is not None else ""


class _Lru(OrderedDict):  # type: ignore[type-arg]
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: object, value: object) -> None:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)

    def hit(self, key: object) -> object | None:
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value


class RowRenderer:
    """Lays out and paints rows for a given font and palette (reconfigure on theme changes)."""

    def __init__(self, font: QFont, palette: QPalette) -> None:
        self._docs = _Lru(800)
        self._layouts = _Lru(600)
        self.configure(font, palette)

    def configure(self, font: QFont, palette: QPalette) -> None:
        self.font = QFont(font)
        self.font.setPointSizeF(font.pointSizeF() + 1)
        self.small = QFont(font)
        self.small.setPointSizeF(max(font.pointSizeF() - 0.5, 7.0))
        self.bold = QFont(self.font)
        self.bold.setWeight(QFont.Weight.DemiBold)
        self.mono = code_font(self.font)
        self.palette = palette
        self.colors = Colors.of(palette)
        metrics = QFontMetricsF(self.font)
        self.line = metrics.lineSpacing()
        self.char = metrics.averageCharWidth()
        self.small_line = QFontMetricsF(self.small).lineSpacing()
        self._docs.clear()
        self._layouts.clear()

    def recolour(self, language: str) -> None:
        """Code in `language` can now be coloured (its lexer was built in a thread): drop what showed it plain."""
        for key in [key for key in self._docs if key[0] == "code" and key[3].lower() == language]:
            del self._docs[key]
        self._layouts.clear()

    # -- sizes

    def estimates(self, rows: list[ChatRow], width: float) -> list[float]:
        """Cheap height guesses for rows not measured yet (off screen): one tight loop, since a long
        session is estimated whole when it opens."""
        compact = self._tool_header() + 6  # collapsed tool and reasoning rows: exact
        notice = self.small_line + 12
        line = self.line * 1.15
        chip = self.small_line + 6
        per_line = {True: max((width * BUBBLE_SHARE - 28) / self.char, 10.0),
                    False: max((width - 28) / self.char, 10.0)}
        user, tool, reasoning, notice_kind = Kind.USER, Kind.TOOL, Kind.REASONING, Kind.NOTICE
        out = []
        for row in rows:
            kind = row.kind
            if (kind is tool or kind is reasoning) and not row.expanded:
                out.append(compact)
            elif kind is notice_kind:
                out.append(notice)
            else:
                text = row.text if row.tool is None else format_arguments(row.tool.arguments) + (row.tool.result or "")
                if kind is user and not row.expanded:
                    text = folded_text(text) or text
                lines = text.count("\n") + 1 + len(text) / per_line[kind is user]
                pictures = sum(1 for path in row.media if is_image(path))
                out.append(lines * line + 40 + (len(row.media) - pictures) * chip + pictures * (THUMBNAIL.height() + 6))
        return out

    def has_layout(self, row: ChatRow, width: float) -> bool:
        return (row.uid, row.version, round(width)) in self._layouts

    def layout(self, row: ChatRow, width: float) -> RowLayout:
        key = (row.uid, row.version, round(width))
        cached = self._layouts.hit(key)
        if isinstance(cached, RowLayout):
            return cached
        build = {Kind.USER: self._user, Kind.ASSISTANT: self._assistant, Kind.REASONING: self._reasoning,
                 Kind.TOOL: self._tool, Kind.ERROR: self._error, Kind.NOTICE: self._notice}[row.kind]
        made = build(row, width)
        self._layouts.put(key, made)
        return made

    # -- building blocks

    def _doc(self, style: str, text: str, width: float, language: str = "") -> QTextDocument:
        key = (style, text, round(width), language)
        cached = self._docs.hit(key)
        if isinstance(cached, QTextDocument):
            return cached
        if style == "prose":
            doc = prose_document(text, self.font, self.palette, width)
        elif style == "code":
            doc = code_document(text, language, self.mono, self.palette, width)
        else:
            doc = plain_document(text, self.font, width)
        self._docs.put(key, doc)
        return doc

    def _stack(self, layout: RowLayout, text: str, x: float, y: float, width: float) -> float:
        """Markdown blocks one under another from y; returns the y below the last one."""
        first = True
        copies = 0
        for block in split_blocks(text):
            if not first:
                y += 8
            first = False
            if isinstance(block, Prose):
                doc = self._doc("prose", block.text, width)
                if ">" in block.text:
                    layout.ops += [_Box(bar.translated(x, y), self.colors.quote_bar, None, 1.5)
                                   for bar in quote_bars(doc)]
                placed = _Doc(doc, QPointF(x, y), self.colors.text)
                layout.ops.append(placed)
                layout.docs.append(placed)
                y += doc.size().height()
            else:
                y = self._code_box(layout, block, QRectF(x, y, width, 0), f"copy{copies}")
                copies += 1
        return y

    def _code_box(self, layout: RowLayout, block: Code, frame: QRectF, key: str, title: str = "") -> float:
        """A code block: header with the language (or title) and a Copy button, then the code."""
        colors = self.colors
        header = self.small_line + 10
        doc = self._doc("code", block.code, frame.width() - 24, block.language)
        height = header + doc.size().height() + 16
        box = QRectF(frame.x(), frame.y(), frame.width(), height)
        layout.ops.append(_Box(box, colors.box, colors.border, 8))
        layout.ops.append(_Box(QRectF(box.x(), box.y(), box.width(), header), colors.box_header, None, 8))
        layout.ops.append(_Box(QRectF(box.x(), box.y() + header - 8, box.width(), 8), colors.box_header, None, 0))
        layout.ops.append(_Label(QRectF(box.x() + 12, box.y(), box.width() - 90, header),
                                 title or block.language or "code", self.small, colors.muted))
        button = QRectF(box.right() - 70, box.y() + 4, 62, header - 8)
        layout.ops.append(_Button(button, "Copy", key, self.small, "Copied ✓"))
        layout.hotspots.append(Hotspot(button, "copy", key, block.code))
        placed = _Doc(doc, QPointF(box.x() + 12, box.y() + header + 8), colors.text)
        layout.ops.append(placed)
        layout.docs.append(placed)
        return box.bottom()

    def _tool_header(self) -> float:
        return max(self.line + 10, 30.0)

    def _disclosure(self, layout: RowLayout, rect: QRectF, expanded: bool, text: str, color: QColor) -> None:
        arrow = "▾" if expanded else "▸"
        layout.ops.append(_Label(rect, f"{arrow}  {text}", self.small, color))
        layout.hotspots.append(Hotspot(rect, "toggle", "toggle"))

    # -- rows

    def _user(self, row: ChatRow, width: float) -> RowLayout:
        """The person's own words, exactly as typed: line breaks, indents and `*`, `#` or `<tag>` stay as they
        are (only the assistant's text is Markdown)."""
        layout = RowLayout(0)
        pad_x, pad_y, top = 14.0, 9.0, 14.0
        inner_max = width * BUBBLE_SHARE - 2 * pad_x
        names = attachment_names(row)
        chip_width = max((THUMBNAIL.width() if is_image(p) else QFontMetricsF(self.small).horizontalAdvance(n) + 36
                          for p, n in names.items()), default=0.0)
        shown = row.text.strip("\n")
        folded = folded_text(shown)
        if folded is not None and not row.expanded:
            shown = folded
        more = ""
        if folded is not None:
            more = "Show less  ▴" if row.expanded else f"Show more  ▾  ({line_count(row.text):,} lines)"
        more_width = QFontMetricsF(self.small).horizontalAdvance(more) + 4
        widest = self._doc("plain", shown, inner_max).idealWidth() if shown.strip() else 0.0
        inner = min(inner_max, max(widest + 1, 40.0, chip_width, more_width))  # the bubble shrinks to short text
        x = width - 4 - inner - 2 * pad_x
        bubble = RowLayout(0)
        y = top + pad_y - 6
        if shown.strip():
            doc = self._doc("plain", shown, inner)
            placed = _Doc(doc, QPointF(x + pad_x, top + pad_y), self.colors.text)
            bubble.ops.append(placed)
            bubble.docs.append(placed)
            y = top + pad_y + doc.size().height()
        if more:
            rect = QRectF(x + pad_x, y + 4, more_width, self.small_line + 4)
            bubble.ops.append(_Label(rect, more, self.small, self.colors.accent))
            bubble.hotspots.append(Hotspot(rect, "toggle", "toggle"))
            y = rect.bottom()
        for path, name in names.items():
            y += 6
            if is_image(path):
                slot = QRectF(x + pad_x, y, min(inner, THUMBNAIL.width()), THUMBNAIL.height())
                bubble.ops.append(_Picture(slot, path, self.small))
                y = slot.bottom()
                continue
            chip = QRectF(x + pad_x, y, inner, self.small_line + 6)
            bubble.ops.append(_Box(chip, self.colors.box_header, None, 5))
            bubble.ops.append(_Label(chip.adjusted(8, 0, -8, 0), f"▪ {name}", self.small, self.colors.text))
            y = chip.bottom()
        rect = QRectF(x, top, inner + 2 * pad_x, y + pad_y - top)
        layout.ops.append(_Box(rect, self.colors.bubble, None, 14))
        layout.frame = rect
        layout.absorb(bubble)
        layout.height = rect.bottom() + 4
        return layout

    def _assistant(self, row: ChatRow, width: float) -> RowLayout:
        layout = RowLayout(0)
        y = self._stack(layout, row.text, 4, 10, width - 8)
        if row.stopped or row.cut_off:
            mark = "◼ Stopped" if row.stopped else CUT_OFF
            layout.ops.append(_Label(QRectF(4, y + 4, width, self.small_line), mark, self.small,
                                     BAD if row.cut_off else self.colors.muted))
            y += self.small_line + 4
        layout.height = y + 6
        return layout

    def _reasoning(self, row: ChatRow, width: float) -> RowLayout:
        layout = RowLayout(0)
        words = len(row.text.split())
        title = "Thinking…" if row.streaming else f"Reasoning · {words} word{'s' if words != 1 else ''}"
        header = QRectF(4, 3, width - 8, self._tool_header())
        self._disclosure(layout, header, row.expanded, title, self.colors.muted)
        y = header.bottom()
        if row.expanded:
            doc = self._doc("plain", row.text.strip(), width - 30)
            layout.ops.append(_Box(QRectF(10, y, 2, doc.size().height()), self.colors.border, None, 1))
            placed = _Doc(doc, QPointF(24, y), self.colors.muted)
            layout.ops.append(placed)
            layout.docs.append(placed)
            y += doc.size().height() + 6
        layout.height = y + 3
        return layout

    def _tool(self, row: ChatRow, width: float) -> RowLayout:
        call = row.tool
        assert call is not None
        colors = self.colors
        layout = RowLayout(0)
        head = self._tool_header()
        top = 3.0
        header = QRectF(4, top, width - 8, head)
        if call.ok is None:
            elapsed = time.monotonic() - call.started if call.started is not None else 0.0
            glyph, glyph_color = "◌", colors.accent
            right = ("waiting for your answer" if call.awaiting
                     else f"running… {int(elapsed)} s" if elapsed >= 1 else "running…")
        else:
            glyph, glyph_color = ("✓", GOOD) if call.ok else ("✗", BAD)
            right = _duration(call.seconds)
        body_height = 0.0
        body = RowLayout(0)
        if row.expanded:
            y = header.bottom() + 6
            y = self._code_box(body, Code(format_arguments(call.arguments), "json"),
                               QRectF(header.x() + 10, y, header.width() - 20, 0), "copy-args", "Arguments")
            if call.result is not None:
                shown = call.result if len(call.result) <= RESULT_SHOWN else (
                    f"{call.result[:RESULT_SHOWN]}\n… ({len(call.result) - RESULT_SHOWN:,} more characters; "
                    "Copy takes all)")
                y = self._code_box(body, Code(shown, ""), QRectF(header.x() + 10, y + 8, header.width() - 20, 0),
                                   "copy-result", "Result")
                body.hotspots[-1].payload = call.result
            body_height = y + 10 - header.bottom()
        elif call.ok is None and call.tail:  # running: what it prints, as it prints it
            y = self._code_box(body, Code(call.tail, ""), QRectF(header.x() + 10, header.bottom() + 4,
                                                                 header.width() - 20, 0), "copy-tail", "Output so far")
            body_height = y + 8 - header.bottom()
        frame = QRectF(header.x(), header.y(), header.width(), head + body_height)
        layout.ops.append(_Box(frame, colors.box, colors.border, 7))
        metrics = QFontMetricsF(self.small)
        x = header.x() + 10
        layout.ops.append(_Label(QRectF(x, header.y(), 16, head), glyph, self.bold, glyph_color))
        x += 20
        name_width = QFontMetricsF(self.bold).horizontalAdvance(call.title) + 2
        layout.ops.append(_Label(QRectF(x, header.y(), name_width, head), call.title, self.bold, colors.text))
        x += name_width + 10
        right_width = metrics.horizontalAdvance(right) + 2
        arrow_x = header.right() - 22
        summary_width = max(arrow_x - right_width - 14 - x, 0.0)
        summary = metrics.elidedText(tool_summary(call), Qt.TextElideMode.ElideRight, summary_width)
        layout.ops.append(_Label(QRectF(x, header.y(), summary_width, head), summary, self.small, colors.muted))
        layout.ops.append(_Label(QRectF(arrow_x - right_width - 8, header.y(), right_width, head), right, self.small,
                                 colors.muted, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
        layout.ops.append(_Label(QRectF(arrow_x, header.y(), 16, head), "▾" if row.expanded else "▸", self.small,
                                 colors.muted))
        layout.hotspots.append(Hotspot(header, "toggle", "toggle"))
        layout.absorb(body)
        layout.height = frame.bottom() + 3
        return layout

    def _error(self, row: ChatRow, width: float) -> RowLayout:
        colors = self.colors
        layout = RowLayout(0)
        top, pad = 10.0, 12.0
        doc = self._doc("plain", row.text, width - 2 * pad - 8)
        title_h = self.line + 2
        button_h = self.line + 10
        height = pad + title_h + 4 + doc.size().height() + 10 + button_h + pad
        box = QRectF(4, top, width - 8, height)
        layout.ops.append(_Box(box, colors.error_fill, colors.error_border, 8))
        layout.ops.append(_Label(QRectF(box.x() + pad, box.y() + pad, box.width() - 2 * pad, title_h),
                                 "⚠  The request failed", self.bold, BAD))
        placed = _Doc(doc, QPointF(box.x() + pad, box.y() + pad + title_h + 4), colors.text)
        layout.ops.append(placed)
        layout.docs.append(placed)
        button = QRectF(box.x() + pad, box.bottom() - pad - button_h, 84, button_h)
        layout.ops.append(_Button(button, "↻  Retry", "retry", self.font))
        layout.hotspots.append(Hotspot(button, "retry", "retry"))
        if row.fix_in_settings:
            settings = QRectF(button.right() + 8, button.y(), 124, button_h)
            layout.ops.append(_Button(settings, "Open Settings", "settings", self.font))
            layout.hotspots.append(Hotspot(settings, "settings", "settings"))
        layout.height = box.bottom() + 6
        return layout

    def _notice(self, row: ChatRow, width: float) -> RowLayout:
        layout = RowLayout(self.small_line + 12)
        layout.ops.append(_Label(QRectF(0, 6, width, self.small_line), row.text, self.small, self.colors.muted,
                                 Qt.AlignmentFlag.AlignCenter))
        return layout


def folded_text(text: str) -> str | None:
    """The start of a message too long to show whole until asked (None: short enough to show whole), ending in "…"."""
    lines = text.split("\n")
    if len(lines) <= FOLD_LINES + 3 and len(text) <= FOLD_CHARS + 300:  # folding away a few lines gains nothing
        return None
    start = "\n".join(lines[:FOLD_LINES])
    return (start[:FOLD_CHARS] if len(start) > FOLD_CHARS else start).rstrip() + " …"


def line_count(text: str) -> int:
    return text.count("\n") + 1


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"

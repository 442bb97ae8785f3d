"""The transcript view: paints only the rows on screen, whatever the length of the session.

Off-screen rows have estimated heights; a row is measured exactly when it first comes into view,
and the first visible row stays put while heights above it are corrected. QListView was not used
because it re-lays out every row when one row's height changes, which a streaming answer does
thirty times a second (about 90 ms per relayout at 10,000 rows)."""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPoint,
    QPointF,
    QRectF,
    Qt,
    QTimer,
    Signal,
    SignalInstance,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QContextMenuEvent,
    QCursor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QToolTip, QWidget

from desktop.conversation.transcript import ChatRow, Kind, format_arguments
from desktop.ui.chat.model import TranscriptModel
from desktop.ui.chat.render import PaintState, RowLayout, RowRenderer
from desktop.ui.chat.row_actions import RowActions
from desktop.ui.chat.selection import TextSelector
from desktop.ui.chat.thumbnails import Thumbnails
from desktop.ui.highlight import lexers
from desktop.ui.plain_text import plain_tip

COLUMN_MAX = 860   # readable line length on wide windows
MARGIN = 18
FOOTER = 34        # room for "Working…" under the last row while a turn runs
COPIED_MS = 1500
PREFETCH_BUDGET = 0.004  # seconds of layout work per idle slice
ESTIMATE_SLICE = 500  # rows estimated per event-loop turn when a chat opens (about 1 ms)
WELCOME = "What can I help with?"
Marker = Callable[[ChatRow, RowLayout], "dict[int, list[QAbstractTextDocumentLayout.Selection]] | None"]
RowTip = Callable[[Sequence[ChatRow], int], str]
WELCOME_HINT = "Ask anything. Type / for commands; drop or paste files and screenshots to attach them."


class MessageView(QAbstractScrollArea):
    retry_requested = Signal(object)  # the ERROR ChatRow whose turn should be sent again
    settings_requested = Signal()  # an error's cure is in Settings
    model_set = Signal()  # another chat is shown
    link_clicked = Signal(str)  # a link in a message: its window opens it or says why not (desktop/ui/links.py)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QAbstractScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.viewport().setMouseTracking(True)
        self.viewport().setAutoFillBackground(True)
        self.viewport().setBackgroundRole(QPalette.ColorRole.Base)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.verticalScrollBar().setSingleStep(48)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.renderer = RowRenderer(self.font(), self.palette())
        lexers.ready.connect(self._recolour)
        self._model: TranscriptModel | None = None
        self._heights: list[float] = []
        self._exact: list[bool] = []
        self._tops: list[float] | None = None
        self._offset = 0.0          # pixels scrolled from the top of the transcript
        self._stick = True          # follow new output while the bottom is in view
        self._syncing = False       # the scrollbar is being set to match the transcript
        self._hover: tuple[int, str] | None = None
        self._pressed: tuple[int, str] | None = None
        self._copied: tuple[int, str] | None = None
        self._copied_timer = QTimer(self, singleShot=True, interval=COPIED_MS)
        self._copied_timer.timeout.connect(self._clear_copied)
        self.selector = TextSelector(self)
        self.selector.pointer_moved.connect(self._offer_actions)  # over text too, the row's actions are offered
        self.selector.link_clicked.connect(self.link_clicked)
        self.row_actions = RowActions(self.viewport())
        self._unestimated = 0  # rows [0, this) still carry a stand-in height: a long chat just opened
        self._estimate_timer = QTimer(self, singleShot=True, interval=0)
        self._estimate_timer.timeout.connect(self._estimate_older)
        self._prefetch_timer = QTimer(self, singleShot=True, interval=0)
        self._prefetch_timer.timeout.connect(self._prefetch)
        self.marks: Marker | None = None  # highlights text in rows (the find bar)
        self.row_tip: RowTip = lambda rows, index: ""  # a hovered row's tooltip (what an answer cost)
        self._thumbnails: Thumbnails | None = None

    def show_thumbnails(self, thumbnails: Thumbnails) -> None:
        """Draw attached pictures in the person's bubbles (their slots are laid out already: only a repaint)."""
        self._thumbnails = thumbnails
        thumbnails.ready.connect(self.viewport().update)

    # -- model

    def model(self) -> TranscriptModel | None:
        return self._model

    def set_model(self, model: TranscriptModel) -> None:
        if self._model is not None:
            for signal, slot in self._connections():
                signal.disconnect(slot)
        self._model = model
        for signal, slot in self._connections():
            signal.connect(slot)
        self._reset()
        self.model_set.emit()

    def _connections(self) -> list[tuple[SignalInstance, Callable[..., None]]]:
        assert self._model is not None
        m = self._model
        return [(m.modelReset, self._reset), (m.rowsInserted, self._inserted), (m.dataChanged, self._changed),
                (m.busy_changed, self._busy_changed), (m.progress_changed, self.viewport().update)]

    def _reset(self) -> None:
        """A chat opened (or rebuilt): the newest rows are estimated now, for the first paint; older ones stand
        in at their average height and are estimated a slice per event-loop turn (`_estimate_older`), so a
        10,000-message chat does not hold the window for the whole loop at once. The rows on screen are laid out
        when the view is next resized or painted, once: the scroll bar a long chat brings narrows the column, and
        laying them out here as well was done twice on the one GUI-thread turn."""
        rows = self._rows()
        width = self._column_width()
        newest = self.renderer.estimates(rows[-ESTIMATE_SLICE:], width)
        self._unestimated = len(rows) - len(newest)
        stand_in = sum(newest) / len(newest) if newest else 0.0
        self._heights = [stand_in] * self._unestimated + newest
        self._exact = [False] * len(rows)
        self._tops = None
        self._stick = True
        self._hover = self._pressed = None
        self.selector.release()
        self._offset = self._max_offset()  # at the newest rows, by their estimates
        self._sync_scrollbar()
        self.viewport().update()
        if self._unestimated:
            self._estimate_timer.start()
        else:
            self._estimate_timer.stop()  # another chat's slices may be pending: nothing left to estimate here

    def _estimate_older(self) -> None:
        """The next slice of stand-in heights, newest first, replaced by estimates; what is on screen stays put."""
        end = self._unestimated
        start = max(end - ESTIMATE_SLICE, 0)
        estimates = self.renderer.estimates(self._rows()[start:end], self._column_width())
        anchor = self._row_at(self._offset)
        moved = 0.0  # how much the rows above the first one on screen grew
        for i, height in enumerate(estimates, start):
            if not self._exact[i]:  # a row measured on screen meanwhile keeps its height
                if i < anchor:
                    moved += height - self._heights[i]
                self._heights[i] = height
        self._tops = None
        self._unestimated = start
        if not self._stick:
            self._offset += moved
        self._measure_visible()  # the scroll bar's range and thumb; the rows on screen did not move: no repaint
        if start:
            self._estimate_timer.start()

    def _inserted(self, parent: QModelIndex, first: int, last: int) -> None:
        rows = self._rows()
        width = self._column_width()
        added = self.renderer.estimates(rows[first:last + 1], width)
        appended = first == len(self._heights)
        if first < self._unestimated:
            self._unestimated += len(added)
        self._heights[first:first] = added
        self._exact[first:first] = [False] * len(added)
        if appended and self._tops is not None:
            self._tops.extend(accumulate(added, initial=self._tops[-1]))
            del self._tops[first + 1]  # `initial` repeats the old total
        else:
            self._tops = None
        self._relayout()

    def _changed(self, top_left: QModelIndex, bottom_right: QModelIndex, _roles: object = None) -> None:
        for i in range(top_left.row(), bottom_right.row() + 1):
            if i < len(self._exact):
                self._exact[i] = False  # keep the old height as the estimate: it is close
        self._relayout()

    def _busy_changed(self, busy: bool) -> None:
        self.row_actions.dismiss()  # what can be redone changes with it
        self._relayout()  # the footer comes or goes

    def _rows(self) -> list[ChatRow]:
        return self._model.rows if self._model is not None else []

    # -- geometry

    def _column_width(self) -> float:
        return float(max(min(self.viewport().width() - 2 * MARGIN, COLUMN_MAX), 200))

    def _column_x(self) -> float:
        return max((self.viewport().width() - self._column_width()) / 2, MARGIN / 2)

    def _ensure_tops(self) -> list[float]:
        if self._tops is None or len(self._tops) != len(self._heights) + 1:
            self._tops = [0.0, *accumulate(self._heights)]
        return self._tops

    def _content_height(self) -> float:
        busy = self._model is not None and self._model.busy
        return self._ensure_tops()[-1] + 12 + (FOOTER if busy else 0)

    def _row_at(self, y: float) -> int:
        """The row under content coordinate y (clamped to the rows that exist)."""
        tops = self._ensure_tops()
        return max(min(bisect_right(tops, y) - 1, len(self._heights) - 1), 0)

    def _max_offset(self) -> float:
        return max(self._content_height() - self.viewport().height(), 0.0)

    def _measure_visible(self) -> None:
        """Measure the rows in view exactly, keeping the first visible row where it is on screen."""
        if not self._heights:
            self._offset = 0.0
            self._sync_scrollbar()  # nothing to scroll (a new chat after a long one)
            return
        width = self._column_width()
        rows = self._rows()
        for _ in range(6):  # corrections converge in one or two passes
            if self._stick:
                self._offset = self._max_offset()
            tops = self._ensure_tops()
            anchor = self._row_at(self._offset)
            anchor_shift = self._offset - tops[anchor]
            last = self._row_at(self._offset + self.viewport().height())
            changed = False
            for i in range(anchor, last + 1):
                if not self._exact[i]:
                    self._exact[i] = True
                    changed = self._set_height(i, self.renderer.layout(rows[i], width).height) or changed
            if not changed:
                break
            if not self._stick:
                self._offset = min(self._ensure_tops()[anchor] + anchor_shift, self._max_offset())
        self._offset = min(max(self._offset, 0.0), self._max_offset())
        self._stick = self._stick or self._offset >= self._max_offset() - 1
        self._sync_scrollbar()

    def _set_height(self, index: int, height: float) -> bool:
        """Record a measured height; the running sums are patched in place when that is cheap (the
        streaming row is the last one) and rebuilt lazily otherwise."""
        delta = height - self._heights[index]
        if not delta:
            return False
        self._heights[index] = height
        tops = self._tops
        if tops is not None and len(tops) - index < 512:
            for j in range(index + 1, len(tops)):
                tops[j] += delta
        else:
            self._tops = None
        return True

    def _sync_scrollbar(self) -> None:
        """The bar follows the transcript. Only its own moves are ignored (`_syncing`), not every signal: the
        scroll area shows or hides the bar when it hears the range change, so an empty chat after a long one
        has none."""
        bar = self.verticalScrollBar()
        self._syncing = True
        try:
            bar.setRange(0, int(self._max_offset()))
            bar.setPageStep(max(self.viewport().height() - 40, 40))
            bar.setValue(int(self._offset))
        finally:
            self._syncing = False

    def _relayout(self) -> None:
        self._measure_visible()
        self._place_selector()
        self.viewport().update()

    def _scrolled(self, value: int) -> None:
        if self._syncing:
            return
        self.row_actions.dismiss()
        self._offset = float(value)
        self._stick = value >= self.verticalScrollBar().maximum() - 2
        self._place_selector()
        self.viewport().update()

    def _place_selector(self) -> None:
        """Keep the text selector over its block as the transcript moves; drop it once that block
        is gone (re-rendered while streaming, or scrolled away) ."""
        placed = self.selector.placed
        if placed is None:
            return
        uid, doc = placed
        rows = self._rows()
        first = self._row_at(self._offset)
        last = self._row_at(self._offset + self.viewport().height())
        index = next((i for i in range(first, last + 1) if rows[i].uid == uid), None) if rows else None
        if index is not None:
            layout = self.renderer.layout(rows[index], self._column_width())
            match = next((d for d in layout.docs if d.doc is doc), None)
            if match is not None:
                self.selector.show_over(uid, doc, self._doc_rect(index, match.pos, doc), match.color)
                return
        self.selector.release()

    def _doc_rect(self, index: int, pos: QPointF, doc: QTextDocument) -> QRectF:
        return QRectF(self.row_rect(index).topLeft() + pos, doc.size())

    def row_rect(self, index: int) -> QRectF:
        """Where row `index` is, in viewport coordinates (it may be off screen)."""
        tops = self._ensure_tops()
        return QRectF(self._column_x(), tops[index] - self._offset, self._column_width(), self._heights[index])

    def control_rect(self, index: int, action: str) -> QRectF | None:
        """Where a row's first control for `action` ("toggle", "copy", "retry") is, in viewport coordinates."""
        row = self._rows()[index]
        layout = self.renderer.layout(row, self._column_width())
        spot = next((h for h in layout.hotspots if h.action == action), None)
        return spot.rect.translated(self.row_rect(index).topLeft()) if spot is not None else None

    def row_layout(self, index: int) -> RowLayout:
        return self.renderer.layout(self._rows()[index], self._column_width())

    def reveal(self, index: int, y: float = 0.0) -> None:
        """Scroll so that `y` pixels into row `index` sit a third of the way down the view (a find hit)."""
        if not 0 <= index < len(self._heights):
            return
        if not self._exact[index]:
            self._exact[index] = True
            self._set_height(index, self.row_layout(index).height)
        self._stick = False
        self.row_actions.dismiss()
        for _ in range(4):  # rows measured on the way in move the target: aim again
            top = self._ensure_tops()[index]
            self._offset = min(max(top + y - self.viewport().height() / 3, 0.0), self._max_offset())
            self._measure_visible()
            if self._ensure_tops()[index] == top:
                break
        self._place_selector()
        self.viewport().update()

    def scroll_to_bottom(self) -> None:
        self._stick = True
        self._relayout()

    def at_bottom(self) -> bool:
        return self._stick

    # -- events

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._exact = [False] * len(self._heights)
        self._relayout()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self.renderer.configure(self.font(), self.palette())
            self._exact = [False] * len(self._heights)
            self._relayout()

    def _recolour(self, language: str) -> None:
        self.renderer.recolour(language)
        self.viewport().update()

    def _prefetch(self) -> None:
        """Lay out the rows a screen above and below the view in idle slices of PREFETCH_BUDGET, so
        scrolling finds them ready. Only the renderer's cache is warmed; heights change when rows show."""
        rows = self._rows()
        if not rows:
            return
        width = self._column_width()
        screen = self.viewport().height()
        first = self._row_at(self._offset)
        last = self._row_at(self._offset + screen)
        above = range(first - 1, self._row_at(self._offset - screen) - 1, -1)
        below = range(last + 1, self._row_at(self._offset + 2 * screen) + 1)
        deadline = time.perf_counter() + PREFETCH_BUDGET
        for i in (*below, *above):
            if not self.renderer.has_layout(rows[i], width):
                if time.perf_counter() > deadline:
                    self._prefetch_timer.start()  # more to do: continue after pending events
                    return
                self.renderer.layout(rows[i], width)

    def paintEvent(self, event: QPaintEvent) -> None:
        self._measure_visible()
        self._prefetch_timer.start()
        painter = QPainter(self.viewport())
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        exposed = QRectF(event.rect())
        rows = self._rows()
        tops = self._ensure_tops()
        width = self._column_width()
        x = self._column_x()
        state = PaintState(self.renderer.colors, QRectF(), thumbnails=self._thumbnails)
        state.skip = self.selector.placed[1] if self.selector.placed and self.selector.isVisible() else None
        if rows:
            first = self._row_at(self._offset + exposed.top())
            last = self._row_at(self._offset + exposed.bottom())
            for i in range(first, last + 1):
                top = tops[i] - self._offset
                layout = self.renderer.layout(rows[i], width)
                uid = rows[i].uid
                state.clip = exposed.translated(-x, -top)
                state.hover = self._hover[1] if self._hover and self._hover[0] == uid else None
                state.copied = self._copied[1] if self._copied and self._copied[0] == uid else None
                state.marks = self.marks(rows[i], layout) if self.marks is not None else None
                painter.save()
                painter.translate(x, top)
                layout.paint(painter, state)
                painter.restore()
        if self._model is not None and self._model.busy:
            painter.setFont(self.renderer.small)
            painter.setPen(self.renderer.colors.muted)
            footer = QRectF(x + 4, tops[-1] - self._offset + 8, width, FOOTER - 8)
            painter.drawText(footer, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop),
                             f"●  {self.status()}")
        elif not rows and (self._model is None or self._model.loaded):
            self._paint_welcome(painter)
        painter.end()

    def status(self) -> str:
        """The line under the last row while a turn runs ("Working…", "Waiting for your answer"); "" otherwise."""
        if self._model is None or not self._model.busy:
            return ""
        return self._model.progress or "Working…"

    def _paint_welcome(self, painter: QPainter) -> None:
        area = QRectF(self.viewport().rect())
        title = QFont(self.renderer.font)
        title.setPointSizeF(title.pointSizeF() * 1.6)
        title.setWeight(QFont.Weight.DemiBold)
        line = QFontMetricsF(title).lineSpacing()
        middle = area.center().y() - line
        painter.setFont(title)
        painter.setPen(self.renderer.colors.text)
        painter.drawText(QRectF(area.left(), middle - line, area.width(), line),
                         int(Qt.AlignmentFlag.AlignCenter), WELCOME)
        painter.setFont(self.renderer.font)
        painter.setPen(self.renderer.colors.muted)
        painter.drawText(QRectF(area.left() + 16, middle + 8, area.width() - 32, line * 2),  # wraps when narrow
                         int(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap),
                         WELCOME_HINT)

    def _index_at(self, pos: QPointF) -> int | None:
        """The row at `pos` (viewport coordinates); None below the last."""
        if not self._rows():
            return None
        y = pos.y() + self._offset
        i = self._row_at(y)
        tops = self._ensure_tops()
        return i if tops[i] <= y < tops[i + 1] else None

    def _hit(self, pos: QPointF) -> tuple[ChatRow, RowLayout, QPointF] | None:
        i = self._index_at(pos)
        if i is None:
            return None
        row = self._rows()[i]
        layout = self.renderer.layout(row, self._column_width())
        return row, layout, QPointF(pos.x() - self._column_x(), pos.y() + self._offset - self._ensure_tops()[i])

    def viewportEvent(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent) and not self.viewport().toolTip():
            self.show_row_tip(QPointF(event.pos()), event.globalPos())
            return True
        return super().viewportEvent(event)

    def show_row_tip(self, pos: QPointF, at: QPoint) -> None:
        """The tooltip of the row at `pos` (viewport coordinates) from `row_tip`, shown at `at` (global)."""
        index = self._index_at(pos)
        tip = self.row_tip(self._rows(), index) if index is not None else ""
        if tip:
            QToolTip.showText(at, tip, self.viewport())
        else:
            QToolTip.hideText()

    def offer_actions_at_pointer(self) -> None:
        """The toolbar again over the row under a pointer that stayed still while the rows changed (‹ or ›
        flipped the answer), so the next click lands on it too."""
        self._offer_actions(QPointF(self.viewport().mapFromGlobal(QCursor.pos())))

    def _offer_actions(self, pos: QPointF) -> None:
        """The toolbar over the user or assistant message under the pointer (`pos` in viewport coordinates)."""
        hit = self._hit(pos)
        model = self._model
        if hit is None or model is None or hit[0].kind not in (Kind.USER, Kind.ASSISTANT) or hit[0].streaming:
            self.row_actions.dismiss()
            return
        row, layout, _ = hit
        if row is self.row_actions.row and self.row_actions.isVisible():
            return
        rect = self.row_rect(self._row_at(pos.y() + self._offset))
        frame = layout.frame.translated(rect.topLeft()) if layout.frame is not None else rect
        latest = model.redoable() and row is (model.last_user() if row.kind is Kind.USER else model.rows[-1])
        self.row_actions.show_for(row, frame, latest, not model.busy)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self._offer_actions(event.position())
        hit = self._hit(event.position())
        hover: tuple[int, str] | None = None
        link = ""
        if hit is not None:
            row, layout, local = hit
            spot = layout.hotspot_at(local)
            hover = (row.uid, spot.key) if spot is not None else None
            link = "" if spot is not None else layout.link_at(local)
            placed = layout.doc_at(local) if spot is None else None
            if placed is not None and not self.selector.selecting():
                index = self._row_at(event.position().y() + self._offset)
                self.selector.show_over(row.uid, placed.doc, self._doc_rect(index, placed.pos, placed.doc),
                                        placed.color)
        pointing = hover is not None or bool(link)
        self.viewport().setCursor(Qt.CursorShape.PointingHandCursor if pointing else Qt.CursorShape.ArrowCursor)
        self.viewport().setToolTip(plain_tip(link))  # the model wrote it
        if hover != self._hover:
            self._hover = hover
            self.viewport().update()

    def leaveEvent(self, event: QEvent) -> None:
        if not self.row_actions.geometry().contains(self.viewport().mapFromGlobal(QCursor.pos())):
            self.row_actions.dismiss()
        self._hover = None
        self.viewport().update()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._pressed = None
        self.selector.release()  # a click outside the selected text ends the selection
        hit = self._hit(event.position())
        if hit is not None and event.button() == Qt.MouseButton.LeftButton:
            row, layout, local = hit
            spot = layout.hotspot_at(local)
            self._pressed = (row.uid, spot.key) if spot else (row.uid, "link:" + layout.link_at(local))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        pressed, self._pressed = self._pressed, None
        hit = self._hit(event.position())
        if pressed is None or hit is None or event.button() != Qt.MouseButton.LeftButton:
            return
        row, layout, local = hit
        spot = layout.hotspot_at(local)
        if spot is not None and pressed == (row.uid, spot.key):
            self.activate(row, spot.action, spot.key, spot.payload)
        elif spot is None and pressed[1] != "link:":
            link = layout.link_at(local)
            if link and pressed == (row.uid, "link:" + link):
                self.link_clicked.emit(link)

    def activate(self, row: ChatRow, action: str, key: str = "", payload: str = "") -> None:
        """What a click on a row's button does: expand/collapse, copy, or retry."""
        if action == "toggle" and self._model is not None:
            self._stick = False  # keep the clicked row in place
            self._model.toggle(row)
        elif action == "copy":
            QGuiApplication.clipboard().setText(payload)
            self._copied = (row.uid, key)
            self._copied_timer.start()
            self.viewport().update()
        elif action == "retry":
            self.retry_requested.emit(row)
        elif action == "settings":
            self.settings_requested.emit()

    def _clear_copied(self) -> None:
        self._copied = None
        self.viewport().update()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        hit = self._hit(QPointF(event.pos()))
        if hit is None:
            return
        row = hit[0]
        text = row.text
        if row.tool is not None:
            text = f"{row.tool.name} {format_arguments(row.tool.arguments)}\n\n{row.tool.result or ''}"
        if not text.strip():
            return
        menu = QMenu(self)
        label = "Copy message" if row.kind in (Kind.USER, Kind.ASSISTANT) else "Copy"
        menu.addAction(label, lambda: QGuiApplication.clipboard().setText(text))
        menu.popup(event.globalPos())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        bar = self.verticalScrollBar()
        if event.key() == Qt.Key.Key_Home:
            bar.setValue(0)
        elif event.key() == Qt.Key.Key_End:
            self.scroll_to_bottom()
        else:
            super().keyPressEvent(event)

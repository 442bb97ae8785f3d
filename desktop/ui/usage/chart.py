"""Tokens by day as stacked bars, one colour per source, drawn with QPainter: PySide6-Essentials has no QtCharts,
and one bar chart does not justify pyqtgraph and numpy in the app (tens of MB, and their import on first
open). Hovering a bar shows that day's tokens and cost by source."""

from __future__ import annotations

from datetime import date, timedelta

from PySide6.QtCore import QEvent, QPoint, QRectF, Qt
from PySide6.QtGui import QColor, QHelpEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QToolTip, QWidget

from desktop.kernel.work import Source
from desktop.usage.report import Summary, Totals, tokens_text

COLOURS = {Source.CHAT: "#3b82f6", Source.REMINDER: "#f59e0b", Source.HEARTBEAT: "#ef4444",
           Source.SUBAGENT: "#8b5cf6", Source.DREAM: "#10b981", Source.CONSOLIDATION: "#94a3b8"}
LEFT, BOTTOM, TOP = 56, 22, 8  # room for the axis labels
_FILLS = {source: QColor(colour) for source, colour in COLOURS.items()}  # made once: a year is ~2,000 bars
_ORDER = {source: n for n, source in enumerate(Source)}


def cost_text(totals: Totals) -> str:
    return "no price known" if totals.cost_usd is None else f"${totals.cost_usd:,.4f}"


class DayBars(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(180)
        self.setMouseTracking(True)
        self.days: list[date] = []
        self.stacks: dict[date, list[tuple[Source, Totals]]] = {}

    def show_summary(self, summary: Summary) -> None:
        today = date.today()
        self.days = [summary.first + timedelta(days=n) for n in range((today - summary.first).days + 1)]
        self.stacks = {}
        for (day, source), totals in summary.by_day_source.items():
            self.stacks.setdefault(day, []).append((source, totals))
        for stack in self.stacks.values():
            stack.sort(key=lambda item: _ORDER[item[0]])
        self.update()

    def _peak(self) -> int:
        return max((sum(t.tokens for _, t in stack) for stack in self.stacks.values()), default=0)

    def _plot(self) -> QRectF:
        return QRectF(LEFT, TOP, max(1, self.width() - LEFT - 8), max(1, self.height() - TOP - BOTTOM))

    def day_at(self, point: QPoint) -> date | None:
        plot = self._plot()
        if not self.days or not plot.contains(point.toPointF()):
            return None
        index = int((point.x() - plot.left()) / plot.width() * len(self.days))
        return self.days[min(index, len(self.days) - 1)]

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)  # no antialiasing: the bars are upright rectangles, and a year of them is drawn
        # in a frame's time only without it
        plot = self._plot()
        text = self.palette().color(QPalette.ColorRole.PlaceholderText)
        painter.setPen(text)
        peak = self._peak()
        painter.drawText(QRectF(0, plot.top() - 6, LEFT - 6, 14), Qt.AlignmentFlag.AlignRight, tokens_text(peak))
        painter.drawText(QRectF(0, plot.bottom() - 8, LEFT - 6, 14), Qt.AlignmentFlag.AlignRight, "0")
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        if not self.days:
            return
        slot = plot.width() / len(self.days)
        gap = min(2.0, slot * 0.2)
        for n, day in enumerate(self.days):
            x = plot.left() + n * slot
            bottom = plot.bottom()
            for source, totals in self.stacks.get(day, []):
                height = plot.height() * totals.tokens / peak if peak else 0
                painter.fillRect(QRectF(x + gap / 2, bottom - height, max(1.0, slot - gap), height), _FILLS[source])
                bottom -= height
        step = max(1, round(len(self.days) / max(1, plot.width() / 70)))  # a date label every ~70 px
        painter.setPen(text)
        for n in range(len(self.days) - 1, -1, -step):
            x = plot.left() + n * slot + slot / 2
            painter.drawText(QRectF(x - 35, plot.bottom() + 4, 70, 14), Qt.AlignmentFlag.AlignHCenter,
                             f"{self.days[n]:%b %d}")

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            day = self.day_at(event.pos())
            if day is None:
                QToolTip.hideText()
            else:
                QToolTip.showText(event.globalPos(), self.describe(day), self)
            return True
        return super().event(event)

    def describe(self, day: date) -> str:
        """The hover text of a day: its tokens and cost by source."""
        stack = self.stacks.get(day, [])
        if not stack:
            return f"{day:%a %Y-%m-%d}: no model calls"
        lines = [f"<b>{day:%a %Y-%m-%d}</b>"]
        lines += [f"<span style='color:{COLOURS[source]}'>■</span> {source.value}: {totals.tokens:,} tokens, "
                  f"{cost_text(totals)}" for source, totals in stack]
        return "<br>".join(lines)

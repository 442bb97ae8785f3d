"""How voice looks: a microphone and a speaker drawn in code (the bundled fonts have no such glyphs, and an icon
theme may have none), and the level meter that shows the microphone is hearing something."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QSizePolicy, QWidget

RECORDING_RED = "#d32f2f"
RELEASE = 0.85  # per tick the meter falls to this share of its height, so it does not flicker between words


def _drawn_icon(draw: Callable[[QPainter, QColor, float], None], colour: QColor | str) -> QIcon:
    """An icon at the sizes toolbars ask for, each drawn by `draw(painter, ink, unit)` on a 24-unit grid."""
    icon = QIcon()
    for size in (16, 20, 24, 32, 48):
        pixmap = QPixmap(size, size)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        draw(painter, QColor(colour), size / 24)
        painter.end()
        icon.addPixmap(pixmap)
    return icon


def _stroke(ink: QColor, unit: float) -> QPen:
    pen = QPen(ink, max(1.2, 1.8 * unit))
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    return pen


def mic_icon(colour: QColor | str, recording: bool = False) -> QIcon:
    """A microphone (a capsule on a stand); while `recording`, a red disc behind it, white on red."""

    def draw(painter: QPainter, ink: QColor, unit: float) -> None:
        if recording:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(RECORDING_RED))
            painter.drawEllipse(QRectF(0.5, 0.5, 24 * unit - 1, 24 * unit - 1))
            ink = QColor("white")
        painter.setPen(_stroke(ink, unit))
        painter.setBrush(ink)
        painter.drawRoundedRect(QRectF(9 * unit, 4 * unit, 6 * unit, 10 * unit), 3 * unit, 3 * unit)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        cup = QPainterPath()
        cup.moveTo(6.5 * unit, 10.5 * unit)
        cup.cubicTo(6.5 * unit, 18 * unit, 17.5 * unit, 18 * unit, 17.5 * unit, 10.5 * unit)
        painter.drawPath(cup)
        painter.drawLine(QRectF(12 * unit, 16.5 * unit, 0, 3.5 * unit).topLeft(),
                         QRectF(12 * unit, 16.5 * unit, 0, 3.5 * unit).bottomLeft())

    return _drawn_icon(draw, colour)


def speaker_icon(colour: QColor | str, speaking: bool = False) -> QIcon:
    """A loudspeaker with two sound waves; while `speaking`, a square stop sign instead."""

    def draw(painter: QPainter, ink: QColor, unit: float) -> None:
        if speaking:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(ink)
            painter.drawRoundedRect(QRectF(6 * unit, 6 * unit, 12 * unit, 12 * unit), 2 * unit, 2 * unit)
            return
        body = QPainterPath()
        body.moveTo(3 * unit, 9 * unit)
        body.lineTo(7 * unit, 9 * unit)
        body.lineTo(12 * unit, 4.5 * unit)
        body.lineTo(12 * unit, 19.5 * unit)
        body.lineTo(7 * unit, 15 * unit)
        body.lineTo(3 * unit, 15 * unit)
        body.closeSubpath()
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(ink)
        painter.drawPath(body)
        painter.setPen(_stroke(ink, unit))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for radius in (4.0, 7.5):  # arcs centred on the cone's mouth, a quarter turn each
            painter.drawArc(QRectF((12 - radius) * unit, (12 - radius) * unit, 2 * radius * unit,
                                   2 * radius * unit), -50 * 16, 100 * 16)

    return _drawn_icon(draw, colour)


class LevelMeter(QWidget):
    """A bar that fills with how loud the microphone is: up at once, down slowly."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.level = 0.0
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(60)
        self.setToolTip("How loud the microphone hears you")

    def sizeHint(self) -> QSize:
        return QSize(120, 8)

    def show_level(self, level: float) -> None:
        shown = max(level, self.level * RELEASE)
        if abs(shown - self.level) > 0.005:
            self.level = shown
            self.update()

    def reset(self) -> None:
        self.level = 0.0
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        track = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        radius = track.height() / 2
        painter.setBrush(self.palette().mid().color())
        painter.drawRoundedRect(track, radius, radius)
        if self.level > 0:
            filled = QRectF(track.left(), track.top(), max(track.height(), track.width() * self.level), track.height())
            painter.setBrush(QColor("#43a047") if self.level < 0.9 else QColor("#f9a825"))  # amber: near clipping
            painter.drawRoundedRect(filled, radius, radius)
        painter.end()

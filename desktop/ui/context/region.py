"""Pick a region: the screen as it was, frozen under a dimmed full-screen layer; dragging a rectangle lights it
up, releasing the mouse takes it, Esc (or a click without a drag) takes nothing."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

HINT = "Drag a rectangle to attach it  ·  Esc to cancel"
MIN_SIDE = 4  # px: a smaller rectangle is a slipped click, not a choice


class RegionPicker(QWidget):
    picked = Signal(QPixmap)
    cancelled = Signal()

    def __init__(self, screen: QPixmap, origin: QPoint) -> None:
        flags = (Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint | Qt.WindowType.Tool)
        super().__init__(None, flags)
        self.setWindowTitle("Pick a region")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self._screen = screen
        self._start: QPoint | None = None
        self._rect = QRect()
        ratio = screen.devicePixelRatio() or 1.0
        self.setGeometry(QRect(origin, screen.size() / ratio))

    def selection(self) -> QRect:
        return self._rect

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._start = event.position().toPoint()
            self._rect = QRect(self._start, self._start)
            self.update()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self._start is not None:
            self._rect = QRect(self._start, event.position().toPoint()).normalized()
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._start is None or event.button() != Qt.MouseButton.LeftButton:
            return
        self._start = None
        rect = self._rect
        if rect.width() < MIN_SIDE or rect.height() < MIN_SIDE:
            self._finish(None)
            return
        self._finish(self._screen.copy(self._source(rect)))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self._finish(None)
        else:
            super().keyPressEvent(event)

    def _finish(self, region: QPixmap | None) -> None:
        self.hide()
        if region is None:
            self.cancelled.emit()
        else:
            self.picked.emit(region)
        self.close()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.drawPixmap(self.rect(), self._screen)
        painter.fillRect(self.rect(), QColor(0, 0, 0, 110))
        if not self._rect.isNull():
            painter.drawPixmap(self._rect, self._screen, self._source(self._rect))
            painter.setPen(QPen(self.palette().highlight().color(), 2))
            painter.drawRect(self._rect.adjusted(0, 0, -1, -1))
        else:
            painter.setPen(QColor("white"))
            painter.drawText(self.rect().adjusted(0, 40, 0, 0), Qt.AlignmentFlag.AlignHCenter, HINT)
        painter.end()

    def _source(self, rect: QRect) -> QRect:
        ratio = self._screen.devicePixelRatio() or 1.0
        return QRect(int(rect.x() * ratio), int(rect.y() * ratio), int(rect.width() * ratio),
                     int(rect.height() * ratio))

"""Selecting text in a painted transcript: a transparent read-only text browser is laid exactly over
the text block under the mouse, showing the very same QTextDocument, so it looks unchanged but the
text can be selected, copied (Ctrl+C or its menu) and its links clicked."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPalette, QTextDocument
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QFrame, QTextBrowser


class TextSelector(QTextBrowser):
    pointer_moved = Signal(QPointF)  # where the pointer is over it, in the transcript's viewport coordinates
    link_clicked = Signal(str)  # for the transcript to pass on

    def __init__(self, view: QAbstractScrollArea) -> None:
        super().__init__(view.viewport())
        self._view = view
        self._blank = QTextDocument(self)
        self.placed: tuple[int, QTextDocument] | None = None  # (row uid, document); keeps the document alive
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextBrowser.LineWrapMode.FixedPixelWidth)
        self.setOpenLinks(False)
        self.anchorClicked.connect(lambda url: self.link_clicked.emit(url.toString()))
        self.viewport().setAutoFillBackground(False)
        self.setStyleSheet("QTextBrowser { background: transparent; }")
        self.viewport().installEventFilter(self)
        self.hide()

    def show_over(self, uid: int, doc: QTextDocument, rect: QRectF, color: QColor) -> None:
        if self.placed is None or self.placed[1] is not doc:
            # Detach the last block first: a browser re-wraps its document to its own width, and that document
            # is the transcript's, so the width of the next block would fold the last one's lines out of sight.
            self.setDocument(self._blank)
            self.setLineWrapColumnOrWidth(math.ceil(doc.textWidth()))
            self.setDocument(doc)
            self.placed = (uid, doc)
            palette = self.palette()
            palette.setColor(QPalette.ColorRole.Text, color)
            self.setPalette(palette)
        self.setGeometry(rect.toAlignedRect())
        self.show()

    def selecting(self) -> bool:
        return self.isVisible() and self.textCursor().hasSelection()

    def release(self) -> None:
        if self.placed is not None:
            self.setDocument(self._blank)  # before the last reference to the shared document goes
            self.placed = None
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Wheel:  # the transcript scrolls, not this one-block browser
            QApplication.sendEvent(self._view.viewport(), event)
            return True
        if event.type() == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
            self.pointer_moved.emit(QPointF(self.viewport().mapTo(self._view.viewport(), event.position().toPoint())))
        return super().eventFilter(watched, event)

"""Guards the PySide6 pin: 6.12.0 loses a reference to None on every void Qt call, and Python 3.11
aborts the app ("none_dealloc") once None's count reaches zero — any window that paints gets there."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject
from PySide6.QtGui import QImage, QPainter


def test_void_qt_calls_keep_none_alive(qapp) -> None:  # type: ignore[no-untyped-def]
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    obj = QObject()
    before = sys.getrefcount(None)
    for _ in range(500):
        painter.setOpacity(0.5)
        obj.setObjectName("x")
        image.fill(0)
    painter.end()
    assert sys.getrefcount(None) - before > -100

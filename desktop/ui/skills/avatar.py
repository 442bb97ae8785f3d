"""A skill's tile: its emoji where some installed font can draw it, otherwise a letter on a colour.

Many Linux desktops have no emoji font; an emoji would then show as an empty box. Whether it can be
drawn is asked of the text shaper (which sees font fallback), not of one font's character map."""

from __future__ import annotations

import zlib
from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPixmap, QTextLayout

from desktop.ui.markdown import mix


def emoji_font(pixels: int) -> QFont:
    font = QFont()
    font.setPixelSize(pixels)
    return font


@lru_cache(maxsize=256)
def can_draw(text: str, pixels: int = 21) -> bool:
    """True when every character of `text` gets a real glyph (glyph 0 is the font's 'missing' box)."""
    if not text.strip():
        return False
    layout = QTextLayout(text, emoji_font(pixels))
    layout.beginLayout()
    layout.createLine()
    layout.endLayout()
    runs = layout.glyphRuns()
    return bool(runs) and all(index != 0 for run in runs for index in run.glyphIndexes())


def paint_avatar(painter: QPainter, tile: QRectF, name: str, emoji: str, palette: QPalette) -> None:
    radius = tile.width() * 0.22
    painter.setPen(Qt.PenStyle.NoPen)
    pixels = round(tile.height() * 0.55)
    if emoji and can_draw(emoji, pixels):
        painter.setBrush(mix(palette.color(QPalette.ColorRole.Base), palette.color(QPalette.ColorRole.Text), 0.07))
        painter.drawRoundedRect(tile, radius, radius)
        painter.setFont(emoji_font(pixels))
        painter.setPen(palette.color(QPalette.ColorRole.Text))
        painter.drawText(tile, Qt.AlignmentFlag.AlignCenter, emoji)
        return
    hue = zlib.crc32(name.encode()) % 360  # stable colour per name
    painter.setBrush(QColor.fromHsl(hue, 150, 120))
    painter.drawRoundedRect(tile, radius, radius)
    font = QFont()
    font.setPixelSize(round(tile.height() * 0.47))
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(QColor("white"))
    painter.drawText(tile, Qt.AlignmentFlag.AlignCenter, (name[:1] or "?").upper())


def avatar_pixmap(size: int, name: str, emoji: str, palette: QPalette, ratio: float = 1.0) -> QPixmap:
    pixmap = QPixmap(round(size * ratio), round(size * ratio))
    pixmap.setDevicePixelRatio(ratio)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    paint_avatar(painter, QRectF(0, 0, size, size), name, emoji, palette)
    painter.end()
    return pixmap

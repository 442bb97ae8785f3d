"""Skill tiles draw without an emoji font: a letter on a colour stands in for an emoji no font has."""

from __future__ import annotations

import zlib

from PySide6.QtGui import QColor, QPalette

from desktop.ui.skills.avatar import avatar_pixmap, can_draw

NO_FONT_HAS_IT = "\U000f0000"  # supplementary private use: no font ships a glyph for it


def test_text_a_font_can_draw_is_told_from_text_that_would_be_a_box(qapp) -> None:  # type: ignore[no-untyped-def]
    assert can_draw("A")
    assert not can_draw(NO_FONT_HAS_IT)
    assert not can_draw("A" + NO_FONT_HAS_IT)
    assert not can_draw("")


def test_an_emoji_without_a_glyph_becomes_a_letter_avatar(qapp) -> None:  # type: ignore[no-untyped-def]
    palette = QPalette()
    tile = avatar_pixmap(52, "weather", NO_FONT_HAS_IT, palette).toImage()
    expected = QColor.fromHsl(zlib.crc32(b"weather") % 360, 150, 120)
    assert tile.pixelColor(4, 26).name() == expected.name()  # the coloured letter tile, not a pale emoji tile
    drawable = avatar_pixmap(52, "weather", "W", palette).toImage()
    assert drawable.pixelColor(4, 26).name() != expected.name()
    assert drawable.pixelColor(4, 26).lightness() > 200  # drawn on the light emoji tile

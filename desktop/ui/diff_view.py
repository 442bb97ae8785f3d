"""Unified diffs as the person reads them, the same wherever one is shown (an approval card's write, a file on
the chat's changes strip): monospace, added lines tinted green and removed ones red across the box's width, in
colours blended into the palette so they read on light and dark themes alike."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFontDatabase, QPalette, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from desktop.ui.markdown import mix

ADDED, REMOVED = QColor("#2da44e"), QColor("#cf222e")  # tints of the diff's lines, blended into the base colour
TINT = 0.22  # how much: readable text on light and dark bases alike
MAX_HEIGHT = 220  # pixels; a longer diff scrolls inside its box


def diff_tints(code: QPlainTextEdit, start: int) -> list[QTextEdit.ExtraSelection]:
    """The added and removed lines of the unified diff that begins at character `start`, each tinted across the
    box's width in a colour blended into the palette's base (light and dark themes alike)."""
    base = code.palette().color(QPalette.ColorRole.AlternateBase)  # the box's background (its owner's style)
    tints: list[QTextEdit.ExtraSelection] = []
    block = code.document().findBlock(start)
    while block.isValid():
        line = block.text()
        colour = (ADDED if line.startswith("+") and not line.startswith("+++")
                  else REMOVED if line.startswith("-") and not line.startswith("---") else None)
        if colour is not None:
            tint = QTextEdit.ExtraSelection()
            tint.format.setBackground(mix(base, colour, TINT))
            tint.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            tint.cursor = QTextCursor(block)
            tints.append(tint)
        block = block.next()
    return tints


class DiffBox(QPlainTextEdit):
    """A read-only box holding one diff, as tall as its lines up to MAX_HEIGHT."""

    def __init__(self, diff: str, parent: QWidget | None = None) -> None:
        super().__init__(diff, parent)
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setExtraSelections(diff_tints(self, 0))
        lines = diff.count("\n") + 1
        self.setFixedHeight(min(MAX_HEIGHT, self.fontMetrics().lineSpacing() * lines + 14))

"""A one-line label that ends in "…" when it is given less room than its text needs, the whole text then in
its tooltip. A plain QLabel either sets its window's narrowest width to its text's (a long chat title squeezing
the columns beside it) or, told to ignore its width, is cut off mid-letter.

Its words are often the model's (a chat titled by a reminder the model named, the turn a change was made by), so
label and tooltip are plain text: markup there, `<img src="/a/path">`, is a file Qt would read."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from desktop.ui.plain_text import plain_tip


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(0, super().minimumSizeHint().height())

    def shown(self) -> str:
        """The text as it fits the label's width now."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, self.contentsRect().width())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        shown = self.shown()
        tip = plain_tip(self.text()) if shown != self.text() else ""
        if self.toolTip() != tip:
            self.setToolTip(tip)
        painter = QPainter(self)
        self.style().drawItemText(painter, self.contentsRect(), int(self.alignment() | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), shown, self.foregroundRole())

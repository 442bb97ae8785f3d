"""Settings' pages with their names in a list down the left: the app has ten pages and each feature may add
one, more than a row of tabs shows at a window's usual width (the last ones were cut off, "Desktop conte").
A list shows every name whole, and grows down, not across.

It answers the calls a QTabWidget would (addTab, tabText, setCurrentIndex, …), which is how Settings and its
callers turn to a page."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QListWidget, QStackedWidget, QWidget

STYLE = """
#pageList { border: none; border-right: 1px solid palette(midlight); background: transparent; }
#pageList::item { padding: 6px 12px; border-radius: 5px; }
#pageList::item:selected { background: palette(highlight); color: palette(highlighted-text); }
"""


class SettingsPages(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(STYLE)
        self.names = QListWidget()
        self.names.setObjectName("pageList")
        self.names.setSpacing(1)
        self.pages = QStackedWidget()
        self.names.currentRowChanged.connect(self.pages.setCurrentIndex)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.names)
        layout.addWidget(self.pages, 1)

    def addTab(self, page: QWidget, name: str) -> int:  # noqa: N802 (QTabWidget's name)
        self.names.addItem(name)
        index = self.pages.addWidget(page)
        self.names.setFixedWidth(self.names.sizeHintForColumn(0) + 2 * self.names.frameWidth() + 12)  # the longest
        if self.names.currentRow() < 0:
            self.names.setCurrentRow(0)
        return index

    def count(self) -> int:
        return self.pages.count()

    def tabText(self, index: int) -> str:  # noqa: N802
        item = self.names.item(index)
        return item.text() if item is not None else ""

    def currentIndex(self) -> int:  # noqa: N802
        return self.pages.currentIndex()

    def setCurrentIndex(self, index: int) -> None:  # noqa: N802
        self.names.setCurrentRow(index)

    def indexOf(self, page: QWidget) -> int:  # noqa: N802
        return self.pages.indexOf(page)

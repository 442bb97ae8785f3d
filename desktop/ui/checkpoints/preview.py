"""The preview of one file in the "Made in this chat" column: Markdown rendered (loading no file by itself: a
picture it names stays blank, a link it holds does nothing), a picture shown fitted to the column, any other
text as text in syntax colours where Pygments knows its kind (desktop/ui/highlight.py, which leaves a long
file plain), HTML as its source, never rendered, and otherwise a line saying why nothing is shown.

What is shown comes from desktop/checkpoints/made.py, read in a thread; a picture is decoded in a thread too."""

from __future__ import annotations

import asyncio
from functools import lru_cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QImage, QPixmap, QResizeEvent, QTextOption
from PySide6.QtWidgets import QLabel, QScrollArea, QStackedWidget, QTextEdit, QVBoxLayout, QWidget

from desktop.checkpoints.made import Preview
from desktop.ui.highlight import highlight, prepare, ready
from desktop.ui.markdown import MarkdownBrowser


class ImageView(QLabel):
    """A picture scaled down to the width it has (never up), again whenever that changes."""

    def __init__(self) -> None:
        super().__init__()
        self.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.image = QImage()

    def set_image(self, image: QImage) -> None:
        self.image = image
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        if self.image.isNull():
            self.clear()
            return
        width = min(self.image.width(), max(self.width() - 8, 16))
        self.setPixmap(QPixmap.fromImage(self.image).scaledToWidth(width, Qt.TransformationMode.SmoothTransformation))


class FilePreview(QWidget):
    """One file's preview; `show_preview` replaces what was shown."""

    def __init__(self) -> None:
        super().__init__()
        self.markdown = MarkdownBrowser()  # a click neither follows a link nor opens a file it names
        self.text = QTextEdit()
        self.text.setReadOnly(True)
        self.text.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # a narrow column
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.image = ImageView()
        pictures = QScrollArea()
        pictures.setWidgetResizable(True)
        pictures.setWidget(self.image)
        self.note = QLabel()
        self.note.setObjectName("madeNote")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)  # why a file is not shown names it, as a command named it
        self.note.hide()
        self.stack = QStackedWidget()
        for view in (self.markdown, self.text, pictures):
            self.stack.addWidget(view)
        self._pictures = pictures
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.note)
        layout.addWidget(self.stack, 1)
        self.shown: Preview | None = None

    async def show_preview(self, preview: Preview) -> None:
        self.shown = preview
        self.note.setText(preview.note)
        self.note.setVisible(bool(preview.note))
        self.stack.setVisible(preview.kind != "none")
        if preview.kind == "markdown":
            self.markdown.setMarkdown(preview.text)
            self.stack.setCurrentWidget(self.markdown)
        elif preview.kind in ("text", "html"):
            language = "html" if preview.kind == "html" else language_of(preview.path)
            if language and not ready(language):
                await prepare(language)  # the lexer built in a thread, then the file shown in colour at once
                if self.shown is not preview:
                    return  # another file was picked meanwhile
            self.text.clear()
            if not highlight(self.text.document(), preview.text, language, self.palette()):
                self.text.setPlainText(preview.text)
            self.stack.setCurrentWidget(self.text)
        elif preview.kind == "image":
            image = await asyncio.to_thread(QImage.fromData, preview.data)
            if self.shown is not preview:
                return  # another file was picked meanwhile
            if image.isNull():
                self.note.setText("This picture could not be read.")
                self.note.show()
                self.stack.hide()
            self.image.set_image(image)
            self.stack.setCurrentWidget(self._pictures)


@lru_cache(maxsize=128)
def language_of(path: str) -> str:
    """The Pygments name of a file's kind, by its name ("" when unknown: it stays plain)."""
    from pygments.lexers import find_lexer_class_for_filename  # late: Pygments loads only when code is shown
    found = find_lexer_class_for_filename(path)
    return found.aliases[0] if found is not None and found.aliases else ""

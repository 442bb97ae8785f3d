"""Tooltips and message boxes that show words the app did not choose (a file a sandboxed command named, a
reminder's text, what an MCP server or the model wrote) as the words they are.

Qt reads a tooltip as markup when it looks like some (Qt::mightBeRichText), and a tooltip has no text format to set
as a label has (labels take `setTextFormat(Qt.TextFormat.PlainText)`): then `<img src="/a/path">` is a file Qt opens
and reads in the app's own process, outside any sandbox, and a named pipe there freezes the app for good."""

from __future__ import annotations

import html

from PySide6.QtGui import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def plain_tip(text: str) -> str:
    """`text` for setToolTip or QToolTip.showText: unchanged when Qt would show it as plain text anyway, else as
    markup that spells its very words (line breaks and spaces kept) and names no file."""
    if not Qt.mightBeRichText(text):
        return text
    return f"<qt><span style='white-space: pre-wrap'>{html.escape(text, quote=False)}</span></qt>"


def plain_box(icon: QMessageBox.Icon, title: str, text: str, buttons: QMessageBox.StandardButton,
              parent: QWidget | None) -> QMessageBox:
    """A message box showing `text` as words: a question naming a thing as others named it (a skill's folder, a
    reminder, a chat's title) would otherwise read as markup. The format is set before the text is: a box given
    its text first reads it at once."""
    box = QMessageBox(icon, title, "", buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(text)
    return box

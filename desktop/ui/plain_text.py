"""Tooltips that show words the app did not choose (a file a sandboxed command named, a reminder's text, what an
MCP server or the model wrote) as the words they are.

Qt reads a tooltip as markup when it looks like some (Qt::mightBeRichText), and a tooltip has no text format to set
as a label has (labels take `setTextFormat(Qt.TextFormat.PlainText)`): then `<img src="/a/path">` is a file Qt opens
and reads in the app's own process, outside any sandbox, and a named pipe there freezes the app for good."""

from __future__ import annotations

import html

from PySide6.QtGui import Qt


def plain_tip(text: str) -> str:
    """`text` for setToolTip or QToolTip.showText: unchanged when Qt would show it as plain text anyway, else as
    markup that spells its very words (line breaks and spaces kept) and names no file."""
    if not Qt.mightBeRichText(text):
        return text
    return f"<qt><span style='white-space: pre-wrap'>{html.escape(text, quote=False)}</span></qt>"

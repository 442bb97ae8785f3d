"""A link clicked in one of the app's windows, handed to the desktop's opener only when
desktop/workspace/opening.py allows it: answers, memory files and skills are words that web pages, MCP servers
and sandboxed commands can steer, and the opener runs outside the sandbox. A refused link says why, in a tooltip
where it was clicked; it can still be selected and copied."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QPoint, QUrl
from PySide6.QtGui import QCursor, QDesktopServices
from PySide6.QtWidgets import QToolTip

from desktop.kernel.taskset import spawn
from desktop.ui.plain_text import plain_tip
from desktop.workspace.opening import link_refusal


def open_link(link: str | QUrl, root: Path) -> None:
    """Open `link` if it may be; `root` is the folder a link without a scheme names a file in (the workspace, a
    skill's folder), and the only one a file link may open from."""
    spawn(_open(link.toString() if isinstance(link, QUrl) else link, root, QCursor.pos()))


async def _open(link: str, root: Path, where: QPoint) -> None:
    why = await asyncio.to_thread(link_refusal, link, root)
    if why:
        QToolTip.showText(where, plain_tip(f"Not opened: {why}."))  # it may name what the link names
        return
    url = QUrl(link)
    QDesktopServices.openUrl(url if url.scheme() else QUrl.fromLocalFile(str(root / url.path())))

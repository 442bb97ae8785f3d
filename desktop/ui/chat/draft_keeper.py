"""A window's unsent message kept on disk as it is typed (desktop/conversation/drafts.py), and given back when the
window is built again: after a quit, a crash or a logout, the message box holds what was being written."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, SignalInstance

from desktop.conversation.drafts import draft_path, load_draft, save_draft
from desktop.kernel.paths import home
from desktop.kernel.taskset import spawn

KEEP_AFTER_MS = 400  # a pause in typing this long writes the draft (never a write per key)


class DraftKeeper(QObject):
    def __init__(self, window: str, text: Callable[[], str], changed: SignalInstance,
                 give_back: Callable[[str], None], parent: QObject) -> None:
        """`window`: the draft's name ("chat", "quick"); `text`: the message as it stands, read when kept;
        `changed`: emitted as it is typed; `give_back`: shows a kept draft (it decides whether the box is free)."""
        super().__init__(parent)
        self._path = draft_path(home().state_dir, window)
        self._text = text
        self._loaded = False  # nothing is written before the kept draft is read: it would be overwritten unseen
        self._written = asyncio.Lock()  # in order: an older text must never land after a newer one
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(KEEP_AFTER_MS)
        self._timer.timeout.connect(self._keep)
        changed.connect(self._timer.start)
        spawn(self._load(give_back))

    async def _load(self, give_back: Callable[[str], None]) -> None:
        kept = await asyncio.to_thread(load_draft, self._path)
        self._loaded = True
        if kept:
            give_back(kept)

    def _keep(self) -> None:
        if self._loaded:
            spawn(self._write(self._text()))
        else:
            self._timer.start()  # once it is read

    async def _write(self, text: str) -> None:
        async with self._written:
            await asyncio.to_thread(save_draft, self._path, text)

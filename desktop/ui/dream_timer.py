"""Runs Dream on a timer in the app: every `schedules.dream_interval` seconds, when there is new history
and no turn is running (the decision itself is Dream.run_if_due, tested without Qt)."""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QTimer, Signal

from desktop import notify
from desktop.core import Core
from desktop.memory.dream import DreamError, DreamResult
from desktop.memory.git_history import GitError
from desktop.tasks import spawn

log = logging.getLogger(__name__)

BUSY_RETRY_MS = 5 * 60 * 1000  # a turn was running: try again soon rather than a whole interval later


class DreamTimer(QObject):
    memory_updated = Signal(str, list)  # commit, changed files: the app may open MemoryWindow.show_commit(rev)

    def __init__(self, core: Core, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.core = core
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(lambda: spawn(self.run_once()))
        self._unsubscribe = core.settings.subscribe("schedules.dream_interval", lambda _: self.start())

    @property
    def interval_ms(self) -> int:
        return max(60, self.core.config.schedules.dream_interval) * 1000

    def start(self) -> None:
        """(Re)start the countdown with the interval currently configured."""
        self._timer.start(self.interval_ms)

    def stop(self) -> None:
        self._timer.stop()
        self._unsubscribe()

    async def run_once(self) -> DreamResult | None:
        """One scheduled attempt; always re-arms the timer."""
        busy = bool(self.core.loop.busy_sessions)
        try:
            result = await self.core.memory.dream.run_if_due(busy)
        except (DreamError, GitError) as exc:
            log.warning("scheduled Dream failed (will retry next time): %s", exc)
            result = None
        finally:
            self._timer.start(BUSY_RETRY_MS if busy else self.interval_ms)
        if result is not None and result.changed:
            notify.notify("Memory updated", f"Dream updated {', '.join(result.changed)}.",
                          notify.memory_change(result.rev) if result.rev else None)
            self.memory_updated.emit(result.rev or "", result.changed)
        return result

"""The scheduler's timer in the app: one single-shot QTimer, armed for the next due job (desktop/scheduler)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer


class SchedulerTimer(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.CoarseTimer)  # waits are minutes long: let the OS batch wake-ups
        self._fire: Callable[[], None] | None = None
        self._timer.timeout.connect(self._fired)

    def arm(self, delay: float, fire: Callable[[], None]) -> None:
        self._fire = fire
        self._timer.start(max(0, round(delay * 1000)))

    def cancel(self) -> None:
        self._timer.stop()
        self._fire = None

    def _fired(self) -> None:
        if self._fire is not None:
            self._fire()

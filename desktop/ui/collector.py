"""Garbage collection on the GUI thread only.

Python's cycle collector runs in whichever thread happens to allocate when a threshold is crossed.
When that is the model-call thread it can destroy Qt objects away from the GUI thread, which crashes
Qt (seen as a segfault in a timer of a freed object). Automatic collection is switched off and a
timer does the same work on the GUI thread, generation by generation, as the thresholds ask.

A full collection walks every tracked object: 70,000 once the app has started, 12 ms on this thread, due
about once a minute while the app is busy. What start-up built (modules, classes, the core, the tray) lives
as long as the app, so once it has started those objects are collected once and then frozen out of every
later collection (`gc.freeze`), which then walks only what came after."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

CHECK_MS = 500


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose count passed its threshold; returns it, or -1."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self._thresholds[generation]:
                gc.collect(generation)
                return generation
        return -1

    def settle(self) -> None:
        """Start-up is over: collect once, then leave everything alive now out of later collections."""
        gc.collect()
        gc.freeze()

    def stop(self) -> None:
        self._timer.stop()
        gc.unfreeze()
        gc.enable()

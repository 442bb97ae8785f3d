"""Garbage collection on the GUI thread only.

Python's cycle collector runs in whichever thread happens to allocate when a threshold is crossed.
When that is the model-call thread it can destroy Qt objects away from the GUI thread, which crashes
Qt (seen as a segfault in a timer of a freed object). Automatic collection is switched off and a
timer does the same work on the GUI thread, generation by generation, as the thresholds ask, and with
CPython's own brake on full collections: one runs only once the objects that reached the oldest generation
since the last one are a quarter of those it kept. Without that brake, an open 10,000-message chat (its
rows live long) was walked by a full collection every minute or so while busy: 20-30 ms each, a visible
stall in a streaming answer.

A full collection walks every tracked object: 70,000 once the app has started, 12 ms on this thread, due
about once a minute while the app is busy. What start-up built (modules, classes, the core, the tray) lives
as long as the app, so once it has started those objects are collected once and then frozen out of every
later collection (`gc.freeze`), which then walks only what came after."""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

CHECK_MS = 500
FULL_AFTER_GROWTH = 0.25  # CPython's ratio (gcmodule.c: long_lived_pending / long_lived_total)


class GuiThreadCollector(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thresholds = gc.get_threshold()
        self._long_lived = _long_lived()  # what the oldest generation kept at its last collection
        self._promoted = 0  # objects moved into it since
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(CHECK_MS)
        self._timer.timeout.connect(self.check)
        self._timer.start()

    def check(self) -> int:
        """Collect the oldest generation whose count passed its threshold (the oldest only once it grew enough);
        returns it, or -1."""
        counts = gc.get_count()
        if counts[2] > self._thresholds[2] and self._promoted > self._long_lived * FULL_AFTER_GROWTH:
            self._collect_all()
            return 2
        # a burst of young objects (a long chat's rows, made at once) counts as the young collections CPython
        # would have made of it while it grew: ten of them, and it goes straight on with the middle generation,
        # so the survivors are walked once on their way to the oldest rather than once more a minute later
        if counts[1] + counts[0] // self._thresholds[0] > self._thresholds[1]:
            young = len(gc.get_objects(0)) + len(gc.get_objects(1))
            self._promoted += max(young - gc.collect(1), 0)  # the survivors move to the oldest generation
            return 1
        if counts[0] > self._thresholds[0]:
            gc.collect(0)
            return 0
        return -1

    def settle(self) -> None:
        """Start-up is over: collect once, then leave everything alive now out of later collections."""
        self._collect_all()
        gc.freeze()

    def _collect_all(self) -> None:
        gc.collect()
        self._long_lived = _long_lived()
        self._promoted = 0

    def stop(self) -> None:
        self._timer.stop()
        gc.unfreeze()
        gc.enable()


def _long_lived() -> int:
    """The objects that survived into the oldest generation, the frozen ones among them (as CPython counts: a
    freeze leaves its long-lived total as it was), so a new long chat is not a quarter of the app by itself."""
    return len(gc.get_objects(2)) + gc.get_freeze_count()

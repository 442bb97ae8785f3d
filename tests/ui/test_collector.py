"""Cycles are collected by the GUI thread's timer, never by whichever thread allocates."""

from __future__ import annotations

import gc

from desktop.ui.collector import GuiThreadCollector


def test_collection_happens_on_the_timer(qapp) -> None:  # type: ignore[no-untyped-def]
    collector = GuiThreadCollector()
    try:
        assert not gc.isenabled()
        for _ in range(gc.get_threshold()[0] + 10):
            a: list[object] = []
            a.append(a)  # a cycle only the collector frees
        assert gc.get_count()[0] > gc.get_threshold()[0]  # nothing ran automatically
        assert collector.check() >= 0
        assert gc.get_count()[0] < gc.get_threshold()[0]
    finally:
        collector.stop()
    assert gc.isenabled()

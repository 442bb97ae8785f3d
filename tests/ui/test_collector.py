"""Cycles are collected by the GUI thread's timer, never by whichever thread allocates."""

from __future__ import annotations

import gc
import weakref

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


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector frees it


def test_after_start_up_is_settled_later_garbage_is_still_collected(qapp) -> None:  # type: ignore[no-untyped-def]
    collector = GuiThreadCollector()
    try:
        kept = Node()
        collector.settle()
        assert gc.get_freeze_count() > 0  # start-up's objects are left out of later collections
        made_later = Node()
        gone = weakref.ref(made_later)
        del made_later
        while gc.get_count()[0] <= gc.get_threshold()[0]:
            Node()
        assert collector.check() >= 0
        assert gone() is None
        assert kept.me is kept
    finally:
        collector.stop()
    assert gc.get_freeze_count() == 0  # everything is collectable again once the app stops

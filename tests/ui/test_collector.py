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



def _use(collector: GuiThreadCollector, rounds: int) -> list[int]:
    """A while of use: each round makes young garbage past the first threshold, then the timer checks."""
    done = []
    for _ in range(rounds):
        for _ in range(gc.get_threshold()[0] + 1):
            Node()
        done.append(collector.check())
    return done


def _age(collector: GuiThreadCollector, objects: int) -> list[Node]:
    """`objects` new long-lived objects, moved by the collector's own checks into the oldest generation."""
    kept = [Node() for _ in range(objects)]
    for _ in range(gc.get_threshold()[1] + 2):
        _use(collector, 1)
        if any(o is kept[-1] for o in gc.get_objects(2)):
            return kept
    raise AssertionError("the objects never reached the oldest generation")


FULL_DUE = (gc.get_threshold()[1] + 1) * (gc.get_threshold()[2] + 1) + 5  # checks until a full one is due


def test_a_big_long_lived_chat_is_not_walked_by_every_full_collection_but_old_garbage_still_goes(qapp) -> None:  # type: ignore[no-untyped-def]
    collector = GuiThreadCollector()
    try:
        collector.settle()
        long_lived = len(gc.get_objects(2)) + gc.get_freeze_count()  # start-up's, frozen, count as long-lived
        old_garbage = Node()
        gone = weakref.ref(old_garbage)
        chat = _age(collector, long_lived // 6)  # like the rows of a long chat: they stay while it is open
        del old_garbage
        assert 2 not in _use(collector, 3 * FULL_DUE)  # they are not walked again and again
        assert gone() is not None  # so that cycle, old when it became garbage, waits
        more = _age(collector, long_lived // 8)  # until what lasts grew by more than a quarter
        assert 2 in _use(collector, FULL_DUE)
        assert gone() is None
        assert chat[0].me is chat[0] and more[0].me is more[0]
    finally:
        collector.stop()


def test_a_burst_of_new_objects_is_walked_once_on_its_way_to_the_oldest_generation(qapp) -> None:  # type: ignore[no-untyped-def]
    collector = GuiThreadCollector()
    try:
        collector.settle()
        rows = [Node() for _ in range(gc.get_threshold()[0] * (gc.get_threshold()[1] + 2))]  # a long chat's rows
        assert collector.check() == 1
        assert any(o is rows[-1] for o in gc.get_objects(2))
    finally:
        collector.stop()

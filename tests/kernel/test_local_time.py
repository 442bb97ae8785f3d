"""Stored times are shown in this computer's zone, whatever zone they were written in."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from desktop.kernel.local_time import local_time


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_times_with_an_offset_are_converted_to_the_local_zone(berlin: None) -> None:
    assert local_time("2026-03-01T09:15:42+00:00") == "2026-03-01 10:15"
    assert local_time("2026-07-01T23:30:00-04:00", seconds=True) == "2026-07-02 05:30:00"  # summer time, next day
    assert local_time("2026-03-01T09:15:00") == "2026-03-01 09:15"  # no zone: already local


def test_text_that_is_not_a_time_comes_back_unchanged() -> None:
    assert local_time("") == ""
    assert local_time("yesterday") == "yesterday"

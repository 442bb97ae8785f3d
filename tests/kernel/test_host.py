"""Features attach after what they require, in their listed order otherwise; a requirement nobody provides
or a circle is a clear error at build time, not a missing service later."""

from __future__ import annotations

import pytest

from desktop.core import FEATURES
from desktop.kernel.host import Feature, attach_order


class Clock: ...


class Alarm: ...


class Log: ...


def feature(name: str, provides: type, *requires: type) -> Feature:
    return Feature(name, provides, lambda host: provides(), requires)


def test_a_feature_comes_after_what_it_requires_and_keeps_its_place_otherwise() -> None:
    alarm, log, clock = feature("alarm", Alarm, Clock), feature("log", Log), feature("clock", Clock)
    assert [f.name for f in attach_order((alarm, log, clock))] == ["log", "clock", "alarm"]


def test_the_app_attaches_its_features_in_the_listed_order() -> None:
    assert attach_order(FEATURES) == list(FEATURES)


def test_a_missing_requirement_and_a_circle_are_named() -> None:
    with pytest.raises(ValueError, match="alarm requires Clock, which no feature provides"):
        attach_order((feature("alarm", Alarm, Clock),))
    with pytest.raises(ValueError, match="circle: alarm, clock"):
        attach_order((feature("alarm", Alarm, Clock), feature("clock", Clock, Alarm)))

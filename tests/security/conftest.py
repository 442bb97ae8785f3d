"""The adversarial suite's lab (one core per module) and its closing count of what held and how."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.security.harness import (
    ASKED,
    CLASS_TALLY,
    CONTAINED,
    REFUSED,
    STOPPED,
    TALLY,
    THROUGH,
    Lab,
    case_class,
    open_lab,
)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> AsyncIterator[Lab]:
    """One core per module (a core takes a while to build); cases share it and check everything after each."""
    async with open_lab(tmp_path_factory.mktemp("security"), case_class(request.module.__name__)) as built:
        yield built


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line for the whole suite, then one per class of case."""
    if not TALLY["tried"]:
        return
    terminalreporter.write_line(f"security: {TALLY['tried']} bad inputs tried — {_counts(TALLY)}")
    for name, counts in sorted(CLASS_TALLY.items()):
        terminalreporter.write_line(f"  {name}: {counts['tried']} tried — {_counts(counts)}")


def _counts(counts: Counter[str]) -> str:
    return (f"{counts[CONTAINED]} contained by the sandbox, {counts[REFUSED]} refused by policy, "
            f"{counts[ASKED]} asked (answered no), {counts[STOPPED]} stopped by a limit, "
            f"{counts[THROUGH]} got through")

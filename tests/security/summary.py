"""The adversarial suite's closing count of what held and how, one line for the run and one per class.

A plugin of the root conftest, not of tests/security/conftest.py: with pytest-xdist the cases run in worker
processes and only the controller prints, and the controller never collects, so it never loads that conftest.
Each worker hands its counts over in `workeroutput` when it ends; the controller adds them up."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.security.harness import ASKED, CLASS_TALLY, CONTAINED, REFUSED, STOPPED, TALLY, THROUGH


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["security"] = {"all": dict(TALLY), "classes": {k: dict(v) for k, v in CLASS_TALLY.items()}}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    counts = getattr(node, "workeroutput", {}).get("security")
    if counts:
        TALLY.update(counts["all"])
        for name, tally in counts["classes"].items():
            CLASS_TALLY[name].update(tally)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TALLY["tried"]:
        return
    terminalreporter.write_line(f"security: {TALLY['tried']} bad inputs tried — {_counts(TALLY)}")
    for name, counts in sorted(CLASS_TALLY.items()):
        terminalreporter.write_line(f"  {name}: {counts['tried']} tried — {_counts(counts)}")


def _counts(counts: Counter[str]) -> str:
    return (f"{counts[CONTAINED]} contained by the sandbox, {counts[REFUSED]} refused by policy, "
            f"{counts[ASKED]} asked (answered no), {counts[STOPPED]} stopped by a limit, "
            f"{counts[THROUGH]} got through")

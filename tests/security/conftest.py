"""The adversarial suite's lab: one core per module (the closing count is tests/security/summary.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from tests.security.harness import Lab, case_class, open_lab


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> AsyncIterator[Lab]:
    """One core per module (a core takes a while to build); cases share it and check everything after each."""
    async with open_lab(tmp_path_factory.mktemp("security"), case_class(request.module.__name__)) as built:
        yield built

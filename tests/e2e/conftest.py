"""End-to-end fixtures: a private X desktop (see xdesktop.py), the scripted model server, app homes.

In-process tests here run on a qasync loop like tests/ui (same loop factory, `until` and garbage collection
after each test)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.xdesktop import Desktop, missing_tools
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import pytest_asyncio_loop_factories  # noqa: F401  (the qasync loop for async tests)


def start_desktop(root: Path, tray: str = "trayer", wm: bool = False) -> Desktop:
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb; the full list is packaging/apt-packages-test.txt)")
    missing = missing_tools(tray, wm)
    if missing:
        pytest.fail(f"desktop tools missing for the end-to-end tests: {', '.join(missing)} "
                    "(install packaging/apt-packages-test.txt)")
    return Desktop(root, tray, wm).start()


@pytest.fixture(scope="session")
def desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    """Xvfb + session bus + trayer (XEmbed tray) + dunst, shared by the whole session."""
    made = start_desktop(tmp_path_factory.mktemp("desktop"))
    yield made
    made.stop()


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def make_home(root: Path, server: FakeOpenAI, **settings: object) -> Path:
    """An app home whose config points at the scripted model server."""
    root.mkdir(parents=True, exist_ok=True)
    config = {"model": "openai/test", "api_base": server.base_url,
              "provider": {"timeout": 20, "retry_delays": [0.2]}, **settings}
    (root / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root

"""The suite's own guards (tests/hangs.py, tests/reaper.py), run on small test files in a pytest of their own:
a hanging test fails alone with its stack and the run reaches its summary; what a test started dies with it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests import reaper

REPO = Path(__file__).resolve().parents[1]

HANGING = '''
import asyncio, subprocess, time
import pytest

def test_sync_hang():
    subprocess.Popen(["sleep", "{sync}"])
    time.sleep(1000)

async def test_async_hang_on_the_qt_loop():
    child = await asyncio.create_subprocess_exec("sleep", "{loop}")
    await child.wait()

def test_nested_qt_loop_hang(qtbot):
    subprocess.Popen(["sleep", "{qt}"], start_new_session=True)
    qtbot.waitUntil(lambda: False, timeout=10**7)

@pytest.mark.timeout(30)  # the reaper lets a leftover process finish exiting for a while before it kills it
def test_leaves_a_process_behind():
    subprocess.Popen(["sleep", "{leak}"])

def test_after_them():
    pass
'''

STUBBORN = '''
import subprocess, time

def test_swallows_every_interrupt():
    subprocess.Popen(["sleep", "{stubborn}"], start_new_session=True)
    while True:
        try:
            time.sleep(1000)
        except BaseException:
            pass

def test_never_reached():
    pass
'''


def marks(tmp_path: Path, *names: str) -> dict[str, str]:
    """Sleep durations no other process uses, so the children can be told apart."""
    base = 70000 + (os.getpid() * 10 + len(tmp_path.name)) % 20000
    return {name: str(base + i) for i, name in enumerate(names)}


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen", "COLUMNS": "400",
           "TESTS_REAPER_EXIT_GRACE": "0.2"}  # the sleeps left behind never exit on their own: no use waiting 2 s
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(folder),
                           "-p", "tests.reaper", "-p", "tests.hangs", "-p", "no:cacheprovider", "-o", "timeout=1",
                           "-o", "addopts=", "-rA", *args, str(folder)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)


def still_running(*durations: str) -> list[str]:
    """Our descendants (orphans come to this pytest, a subreaper) sleeping for one of the durations."""
    return [p.command for p in reaper.tree().values() if p.command.split()[-1:] and p.command.split()[-1] in durations]


def test_each_hang_fails_alone_with_its_stack_and_the_run_reaches_its_summary(tmp_path: Path) -> None:
    sleeps = marks(tmp_path, "sync", "loop", "qt", "leak")
    (tmp_path / "conftest.py").write_text("from tests.ui.conftest import pytest_asyncio_loop_factories  # noqa: F401\n")
    (tmp_path / "test_hanging.py").write_text(textwrap.dedent(HANGING.format(**sleeps)))

    run = run_pytest(tmp_path)

    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    for name in ("test_sync_hang", "test_async_hang_on_the_qt_loop", "test_nested_qt_loop_hang"):
        assert f"FAILED test_hanging.py::{name} - Failed: Timeout (>1s)" in out, out
    assert out.count("Captured stacks at the timeout call") == 3
    assert "time.sleep(1000)" in out and "await child.wait()" in out and "qtbot.waitUntil(" in out  # where each hung
    assert "ERROR test_hanging.py::test_leaves_a_process_behind - Failed: the test left processes running" in out
    assert "PASSED test_hanging.py::test_after_them" in out
    assert "3 failed, 2 passed, 1 error" in out.splitlines()[-1]
    for name in ("sync_hang", "async_hang_on_the_qt_loop", "nested_qt_loop_hang", "leaves_a_process_behind"):
        assert f"test_hanging.py::test_{name}: killed pid" in out
    assert still_running(*sleeps.values()) == []


def test_a_test_that_cannot_be_interrupted_stops_the_run_and_takes_its_processes_along(tmp_path: Path) -> None:
    sleeps = marks(tmp_path, "stubborn")
    (tmp_path / "test_stubborn.py").write_text(textwrap.dedent(STUBBORN.format(**sleeps)))

    run = run_pytest(tmp_path)

    assert run.returncode == 1
    assert "test_stubborn.py::test_swallows_every_interrupt stayed stuck 0.5s after its timeout: the run stops" in run.stdout
    assert "time.sleep(1000)" in run.stdout
    assert "the run stopped: killed pid" in run.stdout and f"sleep {sleeps['stubborn']}" in run.stdout
    assert "test_never_reached" not in run.stdout
    assert still_running(*sleeps.values()) == []


def test_under_xdist_a_worker_that_gives_up_still_says_where_it_was_stuck(tmp_path: Path) -> None:
    """A worker's own terminal goes nowhere: without this, the run said only "node down: Not properly
    terminated" and the stacks that tell why were lost."""
    sleeps = marks(tmp_path, "stubborn")
    (tmp_path / "test_stubborn.py").write_text(textwrap.dedent(STUBBORN.format(**sleeps)))

    run = run_pytest(tmp_path, "-n", "1")

    said = run.stdout + run.stderr
    assert run.returncode == 1
    assert "crashed while running 'test_stubborn.py::test_swallows_every_interrupt'" in said
    assert "test_stubborn.py::test_swallows_every_interrupt stayed stuck 0.5s after its timeout" in run.stderr
    assert "time.sleep(1000)" in run.stderr and f"sleep {sleeps['stubborn']}" in run.stderr
    assert still_running(*sleeps.values()) == []

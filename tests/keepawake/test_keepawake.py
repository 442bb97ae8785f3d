"""Sleep held off while background work runs, against a logind stand-in on a private bus (a real dbus-daemon,
named as the system bus): the inhibitor is taken when a background task starts through a real turn and a
scheduled entry runs, released when the work ends, not taken with `schedules.keep_awake` off, and a computer
that cannot inhibit runs the work all the same."""

from __future__ import annotations

import asyncio
import logging
import os
import select
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.core import Core
from desktop.keepawake import KeepAwake
from desktop.kernel.bus import TurnFinished
from desktop.scheduler import Scheduler
from desktop.scheduler.settings import SchedulesConfig
from desktop.subagents import Subagents
from tests.busstandin import StandIn, private_bus
from tests.cli.in_process import run_main
from tests.conftest import Conversation
from tests.fakeserver import FakeOpenAI
from tests.subagents.test_subagents import model, until


class Logind(StandIn):
    """org.freedesktop.login1's Inhibit: each call gets the write end of a pipe, as logind hands out a FIFO; the
    inhibitor is held while any copy of that end is open (EOF on ours: released)."""

    def __init__(self, address: str) -> None:
        self.asked: list[tuple[str, ...]] = []
        self._ends: list[int] = []
        super().__init__(address, "org.freedesktop.login1", fds=True)

    def answer(self, msg: Any) -> None:
        from jeepney import HeaderFields

        if msg.header.fields.get(HeaderFields.member) == "Inhibit":
            ours, theirs = os.pipe()
            self.asked.append(tuple(msg.body))
            self._ends.append(ours)
            self.reply(msg, "h", (theirs,))
            os.close(theirs)

    def held(self) -> int:
        """How many inhibitors are held now."""
        return sum(1 for end in self._ends if not select.select([end], [], [], 0)[0])

    def close(self) -> None:
        super().close()
        for end in self._ends:
            os.close(end)


@pytest.fixture
def logind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Logind]:
    with private_bus(tmp_path) as address:  # named as the system bus, where logind lives
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        service = Logind(address)
        try:
            yield service
        finally:
            service.close()


async def test_a_background_task_holds_off_sleep_until_it_ends(logind: Logind, chat: Conversation, core: Core,
                                                               fake: FakeOpenAI) -> None:
    fake.default = model([{"task": "summarise the logs", "label": "Logs"}],
                         subagent={"content": "Report: done.", "delay": 2})
    end = await chat.ask("summarise my logs in the background")
    assert isinstance(end, TurnFinished)
    keeper = core.get(KeepAwake)
    await until(lambda: keeper.held and logind.held() == 1, timeout=30)
    (what, who, why, mode) = logind.asked[0]
    assert (what, who, mode) == ("sleep", "Nanobot Tray", "block") and "background" in why
    (task,) = core.get(Subagents).of(chat.key)
    await until(lambda: task.status == "done" and logind.held() == 0, timeout=60)
    assert not keeper.held and len(logind.asked) == 1  # one inhibitor for the whole run


async def test_a_scheduled_run_holds_it_and_the_setting_turns_it_off(logind: Logind, core: Core) -> None:
    gate: dict[str, asyncio.Event] = {}
    scheduler = core.get(Scheduler)

    async def slow_job() -> None:
        gate["go"] = asyncio.Event()
        await gate["go"].wait()

    job = scheduler.add_system_job("slow", lambda: 1.0, slow_job)
    job.anchor = job.anchor.replace(year=job.anchor.year - 1)  # long overdue
    assert scheduler.run_due() == ["slow"]
    await until(lambda: logind.held() == 1, timeout=30)
    gate["go"].set()
    await until(lambda: logind.held() == 0, timeout=30)

    await core.settings.update(lambda c: setattr(c.section(SchedulesConfig), "keep_awake", False))
    job.anchor = job.anchor.replace(year=job.anchor.year - 1)
    assert scheduler.run_due() == ["slow"]
    await until(lambda: "go" in gate and not gate["go"].is_set(), timeout=30)
    await asyncio.sleep(0.3)
    assert logind.held() == 0 and len(logind.asked) == 1
    gate["go"].set()


async def test_without_logind_the_work_runs_all_the_same(chat: Conversation, core: Core, fake: FakeOpenAI,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="desktop.keepawake")
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", f"unix:path={tmp_path / 'no-bus-here'}")
    fake.default = model([{"task": "tidy the notes", "label": "Notes"}], subagent={"content": "Report: tidied."})
    await chat.ask("tidy my notes in the background")
    (task,) = core.get(Subagents).of(chat.key)
    await until(lambda: task.status == "done", timeout=60)
    assert not core.get(KeepAwake).held
    assert "this computer may sleep during background work: no system bus" in caplog.text


def test_doctor_says_whether_sleep_can_be_held_off(logind: Logind, home_dir: Path, tmp_path: Path) -> None:
    ran = run_main(home_dir, "doctor", "--offline")
    assert "keep awake: yes: logind holds off sleep while background work runs" in ran.stdout, ran.stdout
    assert len(logind.asked) == 1  # taken to see, and given back at once (the stand-in closes its copy of
    deadline = time.monotonic() + 10  # the descriptor on its own thread, just after sending it)
    while logind.held() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert logind.held() == 0
    ran = run_main(home_dir, "doctor", "--offline",
                   env_extra={"DBUS_SYSTEM_BUS_ADDRESS": f"unix:path={tmp_path / 'gone'}"})
    assert "keep awake: not available here (no system bus" in ran.stdout

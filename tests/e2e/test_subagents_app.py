"""A background task in the real app on an X desktop with dunst: started from the chat window, it finishes
while the window is hidden, and a real desktop notification names the chat and says what came of it.
Screenshots land in tests/artifacts/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import make_home
from tests.e2e.test_tray_app import _hide_chat, _show_chat, _type_into_chat
from tests.e2e.xdesktop import AppProcess, Desktop, wait_for
from tests.fakeserver import FakeOpenAI
from tests.subagents.test_subagents import model

pytestmark = pytest.mark.e2e


def test_a_background_task_finishing_out_of_sight_is_a_desktop_notification_naming_its_chat(
        desktop: Desktop, model_server: FakeOpenAI, tmp_path: Path) -> None:
    model_server.default = model([{"task": "look up when to plant tomatoes", "label": "Tomato timing"}],
                                 subagent={"content": "Report: plant them in May.", "delay": 4})
    app = AppProcess(desktop, make_home(tmp_path / "home", model_server))
    try:
        app.wait_log(r"model ready", timeout=90)
        chat = _show_chat(desktop)
        _type_into_chat(desktop, chat, "Garden plans: when do tomatoes go in?")
        wait_for(lambda: any(r.get("tools") and r["messages"][-1].get("role") == "tool"
                             for r in model_server.requests), 60, "the chat's answer after spawning")
        _hide_chat(desktop)
        wait_for(lambda: 'string "Garden plans: when do tomatoes go in?"' in desktop.notifications_log(), 90,
                 "the notification naming the chat")
        assert 'string "Summary for you: Report: plant them in May."' in desktop.notifications_log()
        desktop.screenshot("e2e-subagent-notification")
    finally:
        app.stop()

"""The model helper starts when one of the app's windows takes the focus (desktop/ui/providers): the quick prompt
the hotkey opens loads the model library while the question is typed, before anything is sent."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from desktop.providers.helper import model_helper
from desktop.providers.model_thread import run_on_model_thread
from desktop.ui.app import Shell
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until


async def test_the_quick_prompt_taking_the_focus_starts_the_model_helper(shell: Shell, fake: FakeOpenAI) -> None:
    for widget in QApplication.topLevelWidgets():
        widget.hide()
    await run_on_model_thread(model_helper().close())
    assert not model_helper().running
    shell.handle({"action": "quick"})
    quick = shell.window("quick")
    assert quick is not None and quick.isVisible()
    await until(lambda: model_helper().running, message="the model helper started")
    assert fake.requests == []  # nothing was sent: the helper only loads

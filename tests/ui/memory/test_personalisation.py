"""Settings → Personalisation in the running app: USER.md and SOUL.md edited where people look for custom
instructions, saved the memory's one way (into the same history), never over a change made meanwhile."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from desktop.memory import Memory
from desktop.ui.app import Shell
from desktop.ui.memory.personalisation import PersonalisationPage
from desktop.ui.settings import SettingsWindow
from tests.ui.conftest import until


async def open_page(shell: Shell) -> tuple[SettingsWindow, PersonalisationPage]:
    shell.open_window("settings")
    window = shell.window("settings")
    assert isinstance(window, SettingsWindow)
    assert window.show_page("Personalisation")
    page = window.findChild(PersonalisationPage)
    assert page is not None
    return window, page


async def test_custom_instructions_edit_user_and_soul_into_the_memory_history(shell: Shell, qtbot) -> None:  # type: ignore[no-untyped-def]
    assert shell.core is not None
    workspace: Path = shell.core.workspace
    before = (workspace / "USER.md").read_text(encoding="utf-8")
    window, page = await open_page(shell)
    user, soul = page.editors["USER.md"], page.editors["SOUL.md"]
    await until(lambda: user.toPlainText() == before, message="USER.md read into the page")
    window.grab().save("/tmp/ux5shots/settings-personalisation.png")

    user.setPlainText(before + "\nI'm Sam, a nurse in Leeds. Metric units, please.\n")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: "Saved USER.md" in page.status.text(), message="saved")
    assert "nurse in Leeds" in (workspace / "USER.md").read_text(encoding="utf-8")
    subjects = [c.subject for c in await shell.core.get(Memory).git.log()]
    assert subjects[0] == "Edit USER.md by hand"  # the same history the memory window and Dream keep

    (workspace / "SOUL.md").write_text("Changed by Dream meanwhile.\n", encoding="utf-8")
    soul.setPlainText("Be direct and warm.\n")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: "changed elsewhere" in page.status.text(), message="the conflict said")
    assert (workspace / "SOUL.md").read_text(encoding="utf-8") == "Changed by Dream meanwhile.\n"
    assert soul.toPlainText() == "Be direct and warm.\n"  # the typing is kept

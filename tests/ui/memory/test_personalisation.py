"""Settings → Personalisation in the running app: USER.md and SOUL.md edited where people look for custom
instructions, saved the memory's one way (into the same history), never over a change made meanwhile."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.config import by_key, load_config
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
    await until(lambda: "changed outside" in page.status.text(), message="the conflict said")
    assert (workspace / "SOUL.md").read_text(encoding="utf-8") == "Changed by Dream meanwhile.\n"
    assert soul.toPlainText() == "Be direct and warm.\n"  # the typing is kept


async def test_the_windows_own_save_and_close_take_in_the_custom_instructions(shell: Shell, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Typed here, then the window's Save (its default button) or Close: the instructions are saved too, or
    Close asks first, as for any other setting; they are never dropped behind a "Saved"."""
    assert shell.core is not None
    user_file: Path = shell.core.workspace / "USER.md"
    before = user_file.read_text(encoding="utf-8")
    window, page = await open_page(shell)
    user = page.editors["USER.md"]
    await until(lambda: user.toPlainText() == before, message="USER.md read into the page")
    user.setPlainText(before + "\nMetric units, please.\n")

    window.close()
    box = next((w for w in window.findChildren(QMessageBox) if w.isVisible()), None)
    assert box is not None and "USER.md" in box.text() and window.isVisible()
    box.button(QMessageBox.StandardButton.Cancel).click()

    qtbot.mouseClick(window.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: "Metric units" in user_file.read_text(encoding="utf-8"), message="USER.md saved")
    await until(lambda: "Saved" in window.status.text(), message="the window says so")
    assert window.unsaved() == []
    window.close()
    assert not window.isVisible()


async def test_close_asks_about_instructions_typed_before_the_rest_of_settings_was_read(
        shell: Shell, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The instructions' page reads its own files; typed into before config.yaml was read for the other pages
    (a slow disk, a busy machine: it failed a CI run), Close dropped the typing without a question."""
    assert shell.core is not None
    settings = shell.core.settings
    read, gate = settings.read, asyncio.Event()

    async def slow_read():  # type: ignore[no-untyped-def]
        await gate.wait()
        return await read()

    monkeypatch.setattr(settings, "read", slow_read)
    window, page = await open_page(shell)
    user = page.editors["USER.md"]
    await until(lambda: not user.isReadOnly(), message="USER.md read into the page")
    user.setPlainText(user.toPlainText() + "\nMetric units, please.\n")
    window.close()
    box = next((w for w in window.findChildren(QMessageBox) if w.isVisible()), None)
    assert box is not None and "USER.md" in box.text() and window.isVisible()
    config_before = by_key(load_config(settings.path).config)
    box.button(QMessageBox.StandardButton.Save).click()
    gate.set()
    await until(lambda: not window.isVisible(), message="saved, then closed")
    assert "Metric units" in (shell.core.workspace / "USER.md").read_text(encoding="utf-8")
    assert by_key(load_config(settings.path).config) == config_before  # no empty field of the form saved


async def test_a_file_that_may_not_be_read_leaves_the_other_one_editable(  # type: ignore[no-untyped-def]
        bridge, qtbot, tmp_path: Path) -> None:
    """USER.md became a link out of the workspace (a sandboxed command can make one): the page said why, and also
    left SOUL.md blank and read-only for good, its text never shown. SOUL.md is shown and can be edited."""
    workspace: Path = bridge.core.workspace
    soul = (workspace / "SOUL.md").read_text(encoding="utf-8")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("not the workspace's\n", encoding="utf-8")
    (workspace / "USER.md").unlink()
    (workspace / "USER.md").symlink_to(outside)
    page = PersonalisationPage(bridge.core.get(Memory), bridge)
    qtbot.addWidget(page)
    await until(lambda: page.status.text() != "", message="the page read the files")
    assert "USER.md" in page.status.text() and page.editors["USER.md"].isReadOnly()
    assert page.editors["SOUL.md"].toPlainText() == soul and not page.editors["SOUL.md"].isReadOnly()


async def test_a_file_changed_meanwhile_can_be_saved_over_or_loaded_as_in_the_memory_window(  # type: ignore[no-untyped-def]
        bridge, qtbot) -> None:
    """Dream rewrote USER.md after the page read it: Save stopped, and the only way offered was to copy the text,
    Reload and type it in again. As in the memory window, the typing is kept and both ways are offered: a second
    Save, knowingly, replaces that version, or the version on disk is loaded."""
    user = bridge.core.workspace / "USER.md"
    page = PersonalisationPage(bridge.core.get(Memory), bridge)
    qtbot.addWidget(page)
    page.show()
    editor = page.editors["USER.md"]
    await until(lambda: not editor.isReadOnly(), message="USER.md read into the page")
    editor.setPlainText("I'm Sam. Metric units, please.\n")
    user.write_text("Dream's version.\n", encoding="utf-8")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: page.load_theirs.isVisible(), message="the choice offered")
    assert "changed outside" in page.status.text() and "Save replaces" in page.status.text()
    assert user.read_text(encoding="utf-8") == "Dream's version.\n"
    assert editor.toPlainText() == "I'm Sam. Metric units, please.\n"
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: "Saved USER.md" in page.status.text(), message="saved over it, knowingly")
    assert user.read_text(encoding="utf-8") == "I'm Sam. Metric units, please.\n"
    assert not page.load_theirs.isVisible() and page.unsaved() == []

    editor.setPlainText("Another try.\n")
    user.write_text("Dream again.\n", encoding="utf-8")
    qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    await until(lambda: page.load_theirs.isVisible(), message="the choice offered again")
    qtbot.mouseClick(page.load_theirs, Qt.MouseButton.LeftButton)
    assert editor.toPlainText() == "Dream again.\n" and page.unsaved() == [] and not page.load_theirs.isVisible()
    assert user.read_text(encoding="utf-8") == "Dream again.\n"

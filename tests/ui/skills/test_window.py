"""The skills window, driven like a user would (clicks, buttons, dialogs answered by stand-ins),
checked against the files on disk and the agent's next system prompt."""

from __future__ import annotations

import asyncio
import json
import zipfile
from collections.abc import AsyncIterator, Collection
from pathlib import Path

import pytest
import shiboken6
import yaml
from PySide6.QtCore import QEvent, QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from desktop.kernel.bus import TurnFinished
from desktop.skills import Skills
from desktop.skills.frontmatter import parse_skill
from desktop.ui.bridge import CoreBridge
from desktop.ui.skills.dialogs import NameDialog
from desktop.ui.skills.model import pills
from desktop.ui.skills.window import SkillsWindow
from tests.pipes import watched_pipe
from tests.ui.conftest import Opener, hover_tip, until


@pytest.fixture
async def window(bridge: CoreBridge) -> AsyncIterator[SkillsWindow]:
    made = SkillsWindow(bridge.core.get(Skills), bridge)
    made.resize(1100, 720)
    made.show()
    await made.refresh()
    yield made
    await until(lambda: not made._tasks, message="window tasks to finish")
    made.hide()  # deleting a visible window counts as closing the last one and quits the Qt loop
    made.deleteLater()
    await until(lambda: not shiboken6.isValid(made), message="the window to be deleted")


@pytest.fixture
def broken_config(model_config: dict[str, object], home_dir: Path) -> Path:
    """config.yaml with a mistake in it, written before the core starts."""
    path = home_dir / "config.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "surprise_setting: 1\n", encoding="utf-8")
    return path


def prompt(window: SkillsWindow) -> str:
    return window.bridge.core.context.system_prompt()


def disabled_in_config(window: SkillsWindow) -> list[str]:
    data = yaml.safe_load(window.bridge.core.settings.path.read_text(encoding="utf-8"))
    return list((data.get("skills") or {}).get("disabled") or [])


def write_skill(folder: Path, name: str, description: str = "Does a thing. Use when testing.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\nSteps.\n",
                                     encoding="utf-8")
    return folder


def click_switch(window: SkillsWindow, name: str, source: str) -> None:
    """A left click on the row's switch, delivered straight to the list (no nested event loop)."""
    assert window.select(name, source)
    view = window.list_view
    rect = view.visualRect(view.currentIndex())
    point = QPointF(view.itemDelegate().switch_rect(rect).center())
    for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
        event = QMouseEvent(kind, point, view.viewport().mapToGlobal(point), Qt.MouseButton.LeftButton,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(view.viewport(), event)


async def settled(window: SkillsWindow) -> None:
    await until(lambda: not window._tasks, message="window actions to finish")


async def test_switch_disables_a_skill_in_config_and_the_next_prompt(window: SkillsWindow) -> None:
    assert "<name>weather</name>" in prompt(window)
    click_switch(window, "weather", "builtin")
    await until(lambda: "weather" in disabled_in_config(window))
    await settled(window)
    assert "<name>weather</name>" not in prompt(window)
    assert not window.status_of("weather", "builtin").enabled
    assert not window.details.enabled_box.isChecked()

    window.details.enabled_box.click()  # the details pane's checkbox turns it back on
    await until(lambda: "weather" not in disabled_in_config(window))
    await settled(window)
    assert "<name>weather</name>" in prompt(window)
    assert window.status_of("weather", "builtin").enabled

    window.select("tmux", "builtin")  # and Space on the focused row flips it too
    QApplication.sendEvent(window.list_view, QKeyEvent(QEvent.Type.KeyPress, Qt.Key.Key_Space,
                                                       Qt.KeyboardModifier.NoModifier, " "))
    await until(lambda: "tmux" in disabled_in_config(window))
    await settled(window)
    assert "<name>tmux</name>" not in prompt(window)


async def test_an_always_on_skill_switched_off_no_longer_says_always_on(window: SkillsWindow) -> None:
    """The memory skill switched off kept its green "always on" badge, though the agent no longer had it."""
    assert "always on" in [text for text, _, _ in pills(window.status_of("memory", "builtin"))]
    click_switch(window, "memory", "builtin")
    await until(lambda: "memory" in disabled_in_config(window))
    await settled(window)
    assert "These skills are always on" not in prompt(window)
    assert "always on" not in [text for text, _, _ in pills(window.status_of("memory", "builtin"))]


async def test_toggle_is_refused_while_config_is_broken(broken_config: Path, window: SkillsWindow) -> None:
    before = broken_config.read_bytes()
    click_switch(window, "github", "builtin")
    await settled(window)
    assert "fix it before changing settings" in window.banner.text()
    assert "surprise_setting" in window.banner.text()
    assert broken_config.read_bytes() == before
    assert window.status_of("github", "builtin").enabled  # the switch went back on
    assert "<name>github</name>" in prompt(window)


async def test_new_skill_writes_a_valid_skeleton_that_reaches_the_prompt(window: SkillsWindow) -> None:
    asked: list[Collection[str]] = []

    async def answer(taken: Collection[str]) -> str | None:
        asked.append(taken)
        return "release-notes"

    window.ask_name = answer
    window.new_button.click()
    path = window.bridge.core.workspace / "skills" / "release-notes" / "SKILL.md"
    await until(lambda: window.editing is not None)
    await settled(window)
    assert path.is_file() and parse_skill(path).diagnostics == ()
    assert window.editor.text() == path.read_text(encoding="utf-8")
    assert window.status_of("release-notes", "workspace") is not None
    assert f"<location>{path}</location>" in prompt(window)
    assert asked and "release-notes" not in asked[0]

    assert await window.close_editor()
    assert not await window.create_skill("release-notes")  # taken: refused, file untouched
    assert "already exists" in window.banner.text()
    assert parse_skill(path).diagnostics == ()


def test_name_dialog_only_accepts_names_that_follow_the_rules(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = NameDialog({"notes"})
    qtbot.addWidget(dialog)
    create = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    for bad in ("", "My Skill", "a--b", "-x", "x" * 65, "notes"):
        dialog.field.setText(bad)
        assert not create.isEnabled(), bad
    dialog.field.setText("My Skill")
    assert "my-skill" in dialog.message.text()
    dialog.field.setText("notes")
    assert "already has" in dialog.message.text()
    dialog.field.setText("meeting-notes")
    assert create.isEnabled()


def test_name_dialog_says_when_the_new_skill_takes_the_place_of_a_built_in_one(qtbot) -> None:  # type: ignore[no-untyped-def]
    """New skill named as a built-in one ("weather"): the empty skeleton was created and quietly used in place of
    the built-in skill, whose steps the assistant no longer had. The dialog says so before Create, and where to
    change the built-in one instead."""
    dialog = NameDialog({"notes"}, {"weather": "builtin"})
    qtbot.addWidget(dialog)
    dialog.field.setText("weather")
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    assert "in place of the built-in “weather”" in dialog.message.text()
    assert "Copy to workspace" in dialog.message.text()
    dialog.field.setText("meeting-notes")
    assert "in place of" not in dialog.message.text()


async def test_install_a_folder_and_an_archive(window: SkillsWindow, tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "src" / "pdf-helper", "pdf-helper")
    archive = tmp_path / "csv-tools.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("csv-tools/SKILL.md", "---\nname: csv-tools\ndescription: Clean CSV files. Use for CSV.\n---\n"
                                          "\nVersion one.\n")
    picks = {"folder": folder, "archive": archive}

    async def pick(kind: str) -> Path | None:
        return picks[kind]

    answers: list[bool] = []

    async def confirm(title: str, text: str, action: str) -> bool:
        return answers.pop(0)

    window.pick_source, window.confirm = pick, confirm
    skills = window.bridge.core.workspace / "skills"
    window.install_folder_action.trigger()
    await until(lambda: (skills / "pdf-helper" / "SKILL.md").is_file())
    window.install_archive_action.trigger()
    await until(lambda: (skills / "csv-tools" / "SKILL.md").is_file())
    await settled(window)
    assert window.status_of("pdf-helper", "workspace") and window.status_of("csv-tools", "workspace")
    assert window.current().name == "csv-tools"
    assert "<name>pdf-helper</name>" in prompt(window) and "<name>csv-tools</name>" in prompt(window)

    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("csv-tools/SKILL.md", "---\nname: csv-tools\ndescription: Clean CSV files. Use for CSV.\n---\n"
                                          "\nVersion two.\n")
    answers[:] = [False]
    window.install_archive_action.trigger()
    await settled(window)
    assert "Version one." in (skills / "csv-tools" / "SKILL.md").read_text(encoding="utf-8")
    assert "left as it was" in window.banner.text()
    answers[:] = [True]
    window.install_archive_action.trigger()
    await settled(window)
    assert "Version two." in (skills / "csv-tools" / "SKILL.md").read_text(encoding="utf-8")
    assert not answers


async def test_a_refused_archive_says_why_and_installs_nothing(window: SkillsWindow, tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("SKILL.md", "---\nname: evil\ndescription: Nope. Use never.\n---\nx\n")
        zf.writestr("../outside.txt", "escaped")
    assert not await window.install(archive)
    assert "contains '..'" in window.banner.text()
    assert not (window.bridge.core.workspace / "skills" / "evil").exists()
    assert not (tmp_path / "outside.txt").exists()


async def test_editor_validates_live_and_saves_a_broken_skill_with_its_diagnostic(window: SkillsWindow) -> None:
    assert await window.create_skill("notes")
    path = window.editor.path
    assert path is not None and "Looks good" in window.editor.check.text()
    broken = "---\nname: notes\ndescription: Keep notes: anything\n---\n\nBody.\n"
    window.editor.text_edit.setPlainText(broken)
    await until(lambda: "not valid YAML" in window.editor.check.text())

    window.editor.save_button.click()
    await until(lambda: path.read_text(encoding="utf-8") == broken)
    await settled(window)
    assert "cannot be loaded" in window.banner.text()
    assert window.editing is not None  # still open, to fix it
    assert not window.editor.is_modified()
    assert not window.status_of("notes", "workspace").doc.loadable
    assert "<name>notes</name>" not in prompt(window)

    window.editor.text_edit.setPlainText(broken.replace("Keep notes: anything", '"Keep notes: anything"'))
    window.editor.save_button.click()
    await until(lambda: window.editing is None)
    await settled(window)
    assert "Keep notes: anything" in prompt(window)
    assert window.status_of("notes", "workspace").doc.diagnostics == ()


async def answer(window: SkillsWindow, button: str) -> str:
    """Click `button` in the question the window asks; the question's text."""
    await until(lambda: asking(window), message="the question asked")
    box = asking(window)
    assert box is not None
    assert sorted(b.text().replace("&", "") for b in box.buttons()) == ["Cancel", "Discard", "Save"]
    next(b for b in box.buttons() if b.text().replace("&", "") == button).click()
    return box.text()


def asking(window: SkillsWindow) -> QMessageBox | None:
    return next((w for w in window.findChildren(QMessageBox) if w.isVisible()), None)


async def skills_named_as_markup(window: SkillsWindow, tmp_path: Path) -> list[Path]:
    """Two workspace skill folders a command named <img src="…/pipe"> (a name has no slash; the entity spells one),
    in lower and upper case, the pipe being tmp_path/pipe; listed in the window."""
    pipe = str(tmp_path / "pipe").replace("/", "&#47;")
    skills = window.bridge.core.workspace / "skills"
    folders = [skills / f'<img src="{pipe}">', skills / f"<IMG SRC='{pipe}'>"]
    for folder in folders:
        write_skill(folder, "pictured")  # named by its folder: the name it gives is only checked against it
    await window.refresh()
    return folders


async def open_in_the_editor(window: SkillsWindow, folder: Path) -> None:
    """The workspace skill in folder selected, then Edit."""
    assert window.select(folder.name, "workspace")
    window.details.edit_button.click()
    await until(lambda: window.editor.path == folder / "SKILL.md", message=f"{folder.name} in the editor")


async def the_question_shown(window: SkillsWindow) -> QMessageBox:
    """The question the window asks, once it is laid out and painted as on screen."""
    await until(lambda: asking(window), message="the question asked")
    box = asking(window)
    assert box is not None
    box.grab()
    return box


async def test_closing_the_editor_with_unsaved_changes_asks_first(window: SkillsWindow) -> None:
    assert await window.create_skill("drafts")
    window.editor.text_edit.appendPlainText("More.")
    closing = asyncio.ensure_future(window.close_editor())
    await answer(window, "Cancel")
    assert not await closing
    assert window.editing is not None and "More." in window.editor.text()
    closing = asyncio.ensure_future(window.close_editor())
    await answer(window, "Discard")
    assert await closing
    assert window.editing is None
    assert "More." not in (window.bridge.core.workspace / "skills" / "drafts" / "SKILL.md").read_text(encoding="utf-8")


async def test_closing_the_editor_with_unsaved_changes_can_save_them(window: SkillsWindow) -> None:
    """The question offered only Discard and Cancel: a person who meant to keep the changes had to cancel, find
    Save, and close again. Save there saves them and closes the editor, as the other editors' questions do."""
    assert await window.create_skill("drafts")
    window.editor.text_edit.appendPlainText("More.")
    window.close()
    assert "drafts" in await answer(window, "Save")
    await until(lambda: not window.isVisible(), message="the window closed once the changes were saved")
    assert window.editing is None
    assert "More." in (window.bridge.core.workspace / "skills" / "drafts" / "SKILL.md").read_text(encoding="utf-8")


async def test_a_save_never_silently_replaces_a_skill_changed_on_disk_while_it_was_edited(window: SkillsWindow) -> None:
    """The assistant (or another editor) rewrites SKILL.md while the person edits it here: Save writes nothing,
    says so and keeps the typing (nothing keeps an older SKILL.md); a second Save, knowingly, replaces it."""
    assert await window.create_skill("drafts")
    path = window.editor.path
    assert path is not None
    window.editor.text_edit.appendPlainText("My step.")
    theirs = path.read_text(encoding="utf-8") + "Their step.\n"
    path.write_text(theirs, encoding="utf-8")
    assert not await window.save()
    assert path.read_text(encoding="utf-8") == theirs
    assert "changed on disk" in window.banner.text() and "Nothing was saved" in window.banner.text()
    assert window.editing is not None and "My step." in window.editor.text() and window.editor.is_modified()
    assert await window.save()
    assert "My step." in path.read_text(encoding="utf-8")


async def test_typing_on_while_a_save_is_written_stays_in_the_editor(window: SkillsWindow) -> None:
    """Save, then typing on at once: the save (a read and a write off the GUI thread, then the list read again)
    ends after more was typed. The editor stays open with it, not saved, and closing the window asks; when that
    question's Save is typed on too, the window stays open with the typing."""
    assert await window.create_skill("drafts")
    path = window.editor.path
    assert path is not None
    window.editor.text_edit.appendPlainText("My step.")
    saving = asyncio.ensure_future(window.save())
    await asyncio.sleep(0)  # the save has read the editor and waits on the disk
    window.editor.text_edit.appendPlainText("My next step.")
    assert await saving
    assert "My step." in path.read_text(encoding="utf-8")
    assert window.editing is not None and window.stack.currentWidget() is window.editor
    assert "My next step." in window.editor.text() and window.editor.is_modified()
    assert "not saved yet" in window.banner.text()
    window.close()
    await answer(window, "Save")
    await asyncio.sleep(0)  # that save too has read the editor: typing on, the window stays with it
    window.editor.text_edit.appendPlainText("My last step.")
    await settled(window)
    assert window.isVisible() and window.editing is not None and window.editor.is_modified()
    assert "My next step." in path.read_text(encoding="utf-8")
    assert "My last step." not in path.read_text(encoding="utf-8") and "My last step." in window.editor.text()
    assert await window.save()
    assert "My last step." in path.read_text(encoding="utf-8")


async def test_closing_the_window_with_unsaved_changes_asks_first(window: SkillsWindow) -> None:
    """Esc or the title bar's close while a skill's changes are unsaved: asked first, as the editor's Close does;
    Cancel keeps the window and the typing."""
    assert await window.create_skill("drafts")
    window.editor.text_edit.appendPlainText("More.")
    window.close()
    asked = await answer(window, "Cancel")
    await settled(window)
    assert window.isVisible() and "More." in window.editor.text() and "drafts" in asked
    window.close()
    await answer(window, "Discard")
    await until(lambda: not window.isVisible(), message="the window closed once changes were discarded")
    assert window.editing is None


async def test_closing_again_while_the_question_is_open_asks_no_second_question(window: SkillsWindow) -> None:
    """Closing the window again while "Save your changes?" was open (the title bar's close clicked twice, or the
    editor's Esc) opened a second question over the first, to be answered twice. Now a close asked for meanwhile
    waits for the first question's answer: Discard there closes the editor and the window."""
    assert await window.create_skill("drafts")
    window.editor.text_edit.appendPlainText("More.")
    window.close()
    await until(lambda: asking(window), message="the question asked")
    window.close()
    window.editor.close_requested.emit()  # its Esc
    await asyncio.sleep(0.2)  # time for a second question to open
    assert len([box for box in window.findChildren(QMessageBox) if box.isVisible()]) == 1
    await answer(window, "Discard")
    await until(lambda: not window.isVisible(), message="the window closed once changes were discarded")
    await settled(window)
    assert window.editing is None and asking(window) is None


async def test_a_skill_too_large_for_the_app_to_read_is_not_saved(window: SkillsWindow) -> None:
    """A 1.2 MB paste into SKILL.md: saved, the skill would be refused whole (listed as broken, not given to the
    assistant, not even editable here). Save says so and keeps the text; the file stays as it was."""
    assert await window.create_skill("drafts")
    path = window.editor.path
    assert path is not None
    before = path.read_text(encoding="utf-8")
    long = before + "A step of a very long procedure.\n" * 38_000
    window.editor.text_edit.setPlainText(long)
    assert not await window.save()
    assert "Not saved" in window.banner.text() and "1,024 KB" in window.banner.text()
    assert path.read_text(encoding="utf-8") == before and window.editor.text() == long


async def test_builtin_skill_is_read_only_but_can_be_copied_to_the_workspace(window: SkillsWindow) -> None:
    builtin = window.status_of("weather", "builtin")
    window.select("weather", "builtin")
    shown = window.details.body.toPlainText()
    assert shown.startswith("Weather") and "wttr.in" in shown and "description:" not in shown  # Markdown body
    assert window.details.edit_button.isHidden() and not window.details.copy_button.isHidden()
    window.details.copy_button.click()
    copy = window.bridge.core.workspace / "skills" / "weather" / "SKILL.md"
    await until(lambda: window.editing is not None)
    await settled(window)
    assert copy.read_bytes() == builtin.doc.path.read_bytes()
    assert window.status_of("weather", "builtin").shadowed_by == "workspace"
    assert f"<location>{copy}</location>" in prompt(window)
    assert f"<location>{builtin.doc.path}</location>" not in prompt(window)


async def test_reveal_and_links_open_through_the_desktop(window: SkillsWindow, opener: Opener) -> None:
    opened: list[QUrl] = []
    window.open_url = opened.append
    window.select("github", "builtin")
    window.details.reveal_button.click()
    assert opened == [QUrl.fromLocalFile(str(window.status_of("github", "builtin").doc.path.parent))]
    window.details.facts.linkActivated.emit("https://cli.github.com")  # the Homepage link
    await until(lambda: opener.opened == ["https://cli.github.com"])


async def test_a_skill_the_agent_wrote_shows_up_after_its_turn(window: SkillsWindow) -> None:
    """As if the agent had used write_file: the end of its turn rescans the open window."""
    write_skill(window.bridge.core.workspace / "skills" / "from-agent", "from-agent")
    window.bridge.core.bus.publish(TurnFinished("desktop:main", "I wrote the skill."))
    await until(lambda: window.status_of("from-agent", "workspace") is not None)



async def test_dropping_an_archive_on_the_window_installs_it(window: SkillsWindow, tmp_path: Path) -> None:
    archive = tmp_path / "dropped.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("SKILL.md", "---\nname: dropped\ndescription: Came by drag and drop. Use in tests.\n---\nHi.\n")
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(archive))])
    point = QPoint(window.width() // 2, window.height() // 2)
    enter = QDragEnterEvent(point, Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    QApplication.sendEvent(window, QDropEvent(QPointF(point), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
                                              Qt.KeyboardModifier.NoModifier))
    await until(lambda: window.status_of("dropped", "workspace") is not None)
    assert (window.bridge.core.workspace / "skills" / "dropped" / "SKILL.md").is_file()


async def test_uninstall_moves_a_workspace_skill_to_the_trash_only_when_confirmed(window: SkillsWindow) -> None:
    skills = window.bridge.core.workspace / "skills"
    write_skill(skills / "weather", "weather", "My own weather. Use when asked about weather.")
    write_skill(skills / "mine", "mine")
    original = (skills / "weather" / "SKILL.md").read_bytes()
    await window.refresh(select=("weather", "workspace"))
    assert not window.details.uninstall_button.isHidden()
    asked: list[str] = []

    async def answer(title: str, text: str, action: str, *, yes: bool) -> bool:
        asked.append(text)
        return yes

    window.confirm = lambda *a: answer(*a, yes=False)
    window.details.uninstall_button.click()
    await settled(window)
    assert (skills / "weather" / "SKILL.md").read_bytes() == original  # declined: untouched
    assert ".trash" in asked[0] and "Nothing is deleted" in asked[0]

    window.confirm = lambda *a: answer(*a, yes=True)
    assert await window.uninstall()
    assert not (skills / "weather").exists()
    (trashed,) = (skills / ".trash").iterdir()
    assert trashed.name.startswith("weather-") and (trashed / "SKILL.md").read_bytes() == original
    assert window.status_of("weather", "workspace") is None
    assert window.status_of("weather", "builtin").in_effect  # the built-in one is back in the prompt
    assert "built-in one is used again" in window.banner.text()
    assert "<name>mine</name>" in prompt(window)

    window.select("weather", "builtin")
    assert window.details.uninstall_button.isHidden()  # built-in skills cannot be uninstalled
    assert not await window.uninstall()


async def test_a_skills_name_and_description_a_command_wrote_show_as_words_and_load_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """A skill in the workspace is a sandboxed command's to write: a description (or a title) spelling
    <img src="..."> was read as markup by its label, and Qt read the file it named as the skill was shown; a named
    pipe there froze the app."""
    with watched_pipe(tmp_path / "pipe") as opened:
        picture = f'<img src="{tmp_path / "pipe"}">'
        folder = window.bridge.core.workspace / "skills" / "pictured"
        write_skill(folder, "pictured", f"'{picture} Use when testing.'")
        await window.refresh()
        assert window.select("pictured", "workspace")
        details = window.details
        await until(lambda: picture in details.description.text(), message="the skill to be shown")
        details.grab()  # laid out and painted, as on screen
        assert details.description.text().startswith(picture)
    assert opened == []


async def test_a_skill_folder_named_as_markup_shows_its_path_on_hover_as_words_and_loads_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """A workspace skill's folder is named by whatever command made it, and the line under its title shows its path
    on hover: a folder named <img src="&#47;a&#47;pipe"> (a name has no slash; the entity spells one) was read as
    markup by that tooltip, and Qt read the file it named as the tooltip was shown (a named pipe froze the app for
    good). The tooltip shows the path as it is."""
    folders = await skills_named_as_markup(window, tmp_path)
    details = window.details
    tips = []
    with watched_pipe(tmp_path / "pipe") as opened:
        for folder in folders:
            assert window.select(folder.name, "workspace")
            await until(lambda f=folder: details.title.text() == f.name, message=f"{folder.name} to be shown")
            tips.append(hover_tip(details.subtitle))
        (tmp_path / "pipe").unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tips == [str(folder / "SKILL.md") for folder in folders]
    assert opened == [], "the path's tooltip read the pipe a folder's name named"


async def test_the_editor_names_a_skill_folder_named_as_markup_in_words_and_loads_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """Editing a workspace skill names its folder over the text and shows its SKILL.md's path; a folder named
    <img src="&#47;a&#47;pipe"> by the command that made it was read as markup in both lines, and Qt read the
    file it named as the editor was shown (a named pipe froze the app for good). They show the words."""
    folders = await skills_named_as_markup(window, tmp_path)
    shown = []
    with watched_pipe(tmp_path / "pipe") as opened:
        for folder in folders:
            await open_in_the_editor(window, folder)
            window.grab()  # laid out and painted, as on screen
            shown.append((window.editor.heading.text(), window.editor.where.text()))
            window.editor.close_button.click()
            await until(lambda: window.editing is None, message="the editor closed")
        (tmp_path / "pipe").unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert shown == [(f"Editing {folder.name}", str(folder / "SKILL.md")) for folder in folders]
    assert opened == [], "the editor read the pipe a folder's name named"


async def test_uninstalling_a_skill_folder_named_as_markup_asks_in_words_and_loads_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """Uninstall asks first, naming the skill by its folder, as the command that made it named it: a folder named
    <img src="&#47;a&#47;pipe"> was read as markup by the question, and Qt read the file it named as the question
    was shown (a named pipe froze the app for good). The question names it in words."""
    folders = await skills_named_as_markup(window, tmp_path)
    asked = []
    with watched_pipe(tmp_path / "pipe") as opened:
        for folder in folders:
            assert window.select(folder.name, "workspace")
            await until(lambda f=folder: window.details.title.text() == f.name, message=f"{folder.name} shown")
            window.details.uninstall_button.click()
            box = await the_question_shown(window)
            asked.append(box.text())
            next(b for b in box.buttons() if b.text().replace("&", "") == "Cancel").click()
            await until(lambda: asking(window) is None, message="the question gone")
        (tmp_path / "pipe").unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert [text.splitlines()[0] for text in asked] == [f"Uninstall “{folder.name}”?" for folder in folders]
    assert all(folder.exists() for folder in folders)
    assert opened == [], "the question read the pipe a folder's name named"


async def test_closing_the_editor_of_a_skill_folder_named_as_markup_asks_in_words_and_loads_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """Closing the editor with changes not saved asks first, naming the skill by its folder, as the command that
    made it named it: a folder named <img src="&#47;a&#47;pipe"> was read as markup by the question, and Qt read
    the file it named as the question was shown (a named pipe froze the app for good). It names it in words."""
    folders = await skills_named_as_markup(window, tmp_path)
    asked = []
    with watched_pipe(tmp_path / "pipe") as opened:
        for folder in folders:
            await open_in_the_editor(window, folder)
            window.editor.text_edit.appendPlainText("More.")
            closing = asyncio.ensure_future(window.close_editor())
            await the_question_shown(window)
            asked.append(await answer(window, "Discard"))
            assert await closing
        (tmp_path / "pipe").unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert asked == [f"Your changes to “{folder.name}” are not saved." for folder in folders]
    assert opened == [], "the question read the pipe a folder's name named"


async def test_a_skills_description_that_spells_markup_shows_on_hover_in_the_list_as_words_and_loads_no_file(
        window: SkillsWindow, tmp_path: Path) -> None:
    """The list shows a skill's description and path on hover, and a sandboxed command writes the workspace's
    skills: a description spelling <img src="/a/pipe"> was read as markup by that tooltip, and Qt read the file it
    named as the tooltip was shown (a named pipe froze the app for good). The tooltip shows the words."""
    pipe = tmp_path / "pipe"
    skills = window.bridge.core.workspace / "skills"
    said = {"lower": f'<img src="{pipe}"> Use when testing.', "upper": f"<IMG SRC='{pipe}'> Use when testing."}
    for name, description in said.items():
        write_skill(skills / name, name, json.dumps(description))
    await window.refresh()
    tips = {}
    with watched_pipe(pipe) as opened:
        for name in said:
            assert window.select(name, "workspace")
            view = window.list_view
            index = view.currentIndex()
            tips[name] = hover_tip(view.viewport(), view.visualRect(index).center())
        pipe.unlink()  # gone before it has no watcher: whatever still read it would hang the test
    assert tips == {name: f"{description}\n\n{skills / name / 'SKILL.md'}" for name, description in said.items()}
    assert opened == [], "the list's tooltip read the pipe a description named"

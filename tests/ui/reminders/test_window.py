"""The Reminders window on a running core: every job with its schedule in words, next run in local time and
chat; pause and resume, run now, delete; it follows changes made elsewhere (the cron tool)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QDialog, QDialogButtonBox

from desktop.approvals.settings import ApprovalsConfig
from desktop.core import build_core
from desktop.mcp.settings import McpConfig, McpServerConfig
from desktop.reminders import Reminders
from desktop.scheduler.schedules import At, Cron, Every
from desktop.ui.bridge import CoreBridge
from desktop.ui.reminders.window import EMPTY, RemindersWindow, ToolsDialog
from desktop.ui.skills.model import RED
from tests.fakeserver import FakeOpenAI
from tests.pipes import watched_pipe
from tests.reminders.conftest import paris  # noqa: F401  (autouse: this window too is tested on Paris time)
from tests.ui.chats.test_names import saved_by_an_earlier_run
from tests.ui.conftest import hover_tip, until
from tests.usage.test_counting import counts

SHOTS = os.environ.get("NANOBOT_SCREENSHOTS")  # a folder: save what the window looks like there




@pytest.fixture
async def window(bridge: CoreBridge, qtbot) -> AsyncIterator[RemindersWindow]:  # type: ignore[no-untyped-def]
    made = RemindersWindow(bridge.core.get(Reminders), bridge)
    qtbot.addWidget(made)
    made.show()
    yield made


def rows(window: RemindersWindow) -> list[list[str]]:
    model = window.model
    return [[model.item(r, c).text() for c in range(model.columnCount())] for r in range(model.rowCount())]


async def test_jobs_are_listed_and_paused_resumed_run_and_deleted(
        window: RemindersWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    assert window.empty.text() == EMPTY and window.empty.isVisible() and not window.table.isVisible()
    reminders = bridge.core.get(Reminders)
    trip = await bridge.core.sessions.load("desktop:trip")
    trip.metadata["title"] = "Trip plans"
    await bridge.core.sessions.append(trip, {"role": "user", "content": "Plan a trip"})
    await reminders.add("desktop:trip", Cron("0 9 * * 1-5", "Europe/Paris"), "Summarise my calendar", "Calendar")
    await reminders.add("desktop:trip", Every(600, datetime.now(UTC)), "Check the oven", "Oven")
    soon = datetime(2030, 1, 7, 14, 0, tzinfo=UTC)
    await reminders.add("quick:abc", At(soon), "Call Sam", "Call Sam")
    # the rows come at once; their chats' titles once read from the chats (a separate task, after)
    await until(lambda: window.model.rowCount() == 3 and rows(window)[0][4] == "Trip plans",
                message="jobs added elsewhere show up, named by their chats")
    listed = rows(window)
    assert listed[0][:2] == ["Calendar", "Weekdays at 09:00 (Europe/Paris)"] and listed[0][4] == "Trip plans"
    assert listed[1][1] == "Every 10 minutes" and listed[2][1:] == [
        "Once at 2030-01-07 15:00", "Mon 2030-01-07 15:00 CET", "—", "Deleted chat", "—"]
    assert window.table.isVisible() and not window.empty.isVisible()
    if SHOTS:
        window.resize(900, 300)
        window.grab().save(os.path.join(SHOTS, "reminders-window.png"))

    opened: list[str] = []
    window.open_session.connect(opened.append)
    window.table.selectRow(2)
    window.open_button.click()
    assert opened == ["quick:abc"]

    window.table.selectRow(1)
    assert window.pause_button.text() == "Pause"
    window.pause_button.click()
    await until(lambda: rows(window)[1][2] == "Paused", message="paused")
    assert window.pause_button.text() == "Resume" and reminders.jobs[1].paused
    window.pause_button.click()
    await until(lambda: rows(window)[1][2] != "Paused", message="resumed")
    assert window.pause_button.text() == "Pause" and not reminders.jobs[1].paused

    fake.add({"content": "Time to check the oven."})
    window.run_button.click()
    assert "running now" in window.notice.label.text()
    session = await bridge.core.sessions.load("desktop:trip")
    # the run's model call may have to start the model helper, which loads litellm: seconds on a loaded machine
    await until(lambda: session.messages[-1].get("content") == "Time to check the oven.", 60, message="ran")
    assert session.messages[-2]["kind"] == "scheduled" and window.model.rowCount() == 3  # recurring: stays

    asked: list[str] = []

    async def confirm(title: str, text: str, action: str) -> bool:
        asked.append(text)
        return True

    window.confirm = confirm
    window.table.selectRow(2)
    assert await window.delete()
    assert asked == ["Delete “Call Sam” (once at 2030-01-07 15:00)? It will not run again."]
    assert [row[0] for row in rows(window)] == ["Calendar", "Oven"]
    assert [job.label for job in reminders.jobs] == ["Calendar", "Oven"]
    saved = Path(bridge.core.home.state_dir / "cron_jobs.json").read_text()
    assert "Call Sam" not in saved and "Oven" in saved


async def test_the_chat_column_names_each_jobs_chat_by_its_title_never_by_its_key(
        window: RemindersWindow, bridge: CoreBridge) -> None:
    """Chats saved by an earlier run of the app (none of them loaded) by their titles as the chat list shows
    them, one saved before it got a title and one that is gone in words; the key stays on hover."""
    await saved_by_an_earlier_run(bridge)
    reminders = bridge.core.get(Reminders)
    for key, label in (("desktop:trip", "Calendar"), ("desktop:bare", "Stretch"), ("quick:gone", "Call Sam")):
        await reminders.add(key, Every(3600, datetime.now(UTC)), label, label)
    await until(lambda: [row[4] for row in rows(window)] == ["Trip plans", "Untitled chat", "Deleted chat"],
                message=f"the chats named, not {[row[4] for row in rows(window)]}")
    assert window.model.item(0, 4).toolTip() == "desktop:trip"


async def test_tools_are_decided_ahead_and_allow_and_run_again_grants_what_the_last_run_wanted(
        window: RemindersWindow, bridge: CoreBridge, fake: FakeOpenAI) -> None:
    reminders = bridge.core.get(Reminders)
    await bridge.core.settings.update(lambda config: config.section(ApprovalsConfig).tools.update(exec="ask"))
    job = await reminders.add("desktop:trip", Every(3600, datetime.now(UTC)), "Back up the notes", "Backup")
    await until(lambda: window.model.rowCount() == 1, message="listed")
    window.table.selectRow(0)
    assert rows(window)[0][5] == "—" and not window.again_button.isVisible()

    chosen: list[dict[str, str] | None] = [{"web_fetch": "allow", "exce": "deny"}]

    async def ask_tools(_job: object) -> dict[str, str] | None:
        return chosen[0]

    window.ask_tools = ask_tools  # type: ignore[assignment]
    await window.edit_tools()
    assert "there is no tool &#x27;exce&#x27;" in window.notice.label.text() and job.grants == {}  # all or none
    chosen[0] = {"web_fetch": "allow", "list_dir": "deny"}
    await window.edit_tools()
    assert rows(window)[0][5] == "may use web_fetch · never uses list_dir"
    assert job.grants == {"web_fetch": "allow", "list_dir": "deny"}

    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Could not."})
    await reminders.run_now(job.id)
    await until(lambda: window.again_button.isVisible(), message="its last run wanted exec")
    assert rows(window)[0][5] == "may use web_fetch · never uses list_dir · wanted exec"
    fake.add({"tool_calls": [{"name": "exec", "arguments": {"command": "echo ran > ran.txt"}}]},
             {"content": "Backed up."})
    window.again_button.click()
    await until(lambda: (bridge.core.workspace / "ran.txt").exists(), message="ran with the grant")
    await until(lambda: not window.again_button.isVisible(), message="nothing wanted any more")
    assert rows(window)[0][5] == "may use web_fetch, exec · never uses list_dir"


async def test_the_tools_dialog_refuses_a_server_not_set_up_and_keeps_the_typing(
        window: RemindersWindow, bridge: CoreBridge) -> None:
    """mcp:gihtub (a typo for the github server) was saved and granted nothing; and any name refused closed the
    dialog, so the person typed it all again. OK now says what is wrong in the dialog, which stays open with
    what was typed, and nothing is saved until the names are right."""
    await bridge.core.settings.update(lambda config: config.section(McpConfig).servers.update(
        github=McpServerConfig(command="github-server", enabled=False)))
    job = await bridge.core.get(Reminders).add("desktop:trip", Every(3600, datetime.now(UTC)), "Issues", "Issues")
    dialog = ToolsDialog(job, window.reminders, window)
    dialog.show()
    dialog.allowed.setText("exec, mcp:gihtub")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.result() != QDialog.DialogCode.Accepted and dialog.problem.isVisible()
    assert dialog.problem.text() == "There is no MCP server 'gihtub' (servers: github)."
    assert dialog.allowed.text() == "exec, mcp:gihtub" and job.grants == {}
    dialog.allowed.setText("exec, mcp:github")
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.grants() == {"exec": "allow", "mcp:github": "allow"}


def run_rows(window: RemindersWindow) -> list[list[str]]:
    model = window.runs_model
    return [[model.item(r, c).text() for c in range(model.columnCount())] for r in range(model.rowCount())]


async def test_a_jobs_last_runs_show_how_each_went_with_its_tokens_and_again_after_a_restart(
        model_config: dict[str, Any], memory_keyring: object, fake: FakeOpenAI, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A run that answered (its two calls' tokens exactly), one that failed, one missed while the app was closed;
    then the app starts again and the window, over the same data folder, shows the same."""
    shown = []
    for start in range(2):  # the app, then the app started again
        core = build_core()
        await core.start()
        bridge = CoreBridge(core)
        window = RemindersWindow(core.get(Reminders), bridge)
        qtbot.addWidget(window)
        window.resize(980, 520)
        window.show()
        reminders = core.get(Reminders)
        try:
            if not start:
                job = await reminders.add("desktop:trip", Every(3600, datetime.now(UTC)), "Check the oven", "Oven")
                await until(lambda w=window: w.model.rowCount() == 1, message="listed")
                window.table.selectRow(0)
                assert window.runs_title.text() == "“Oven” has not run yet." and not window.runs_table.isVisible()
                fake.add({"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}], "usage": counts(1000, 20)},
                         {"content": "The oven is fine.", "usage": counts(1100, 30)})
                await reminders.run_now(job.id)
                await until(lambda w=window: rows(w)[0][3] == "Answered · 2.1k tokens", message="its last run")
                fake.add({"status": 400, "body": {"error": {"message": "model is overloaded",
                                                            "type": "invalid_request_error"}}})
                await reminders.run_now(job.id)
                await until(lambda w=window: rows(w)[0][3] == "Failed", message="its failed run")
                job.next_run = reminders.now() - timedelta(hours=3)  # due before the app started
                await reminders.run_due()
                await until(lambda w=window: rows(w)[0][3] == "Missed", message="its missed run")
            else:
                await until(lambda w=window: w.model.rowCount() == 1 and rows(w)[0][4], message="listed after a restart")
                window.table.selectRow(0)
            assert window.runs_title.text() == "Last runs of “Oven”" and window.runs_table.isVisible()
            listed = run_rows(window)
            assert [row[1:] for row in listed] == [["Missed: the app was closed", "—", "—"],
                                                    [listed[1][1], "0", "—"], ["Answered", "2,150", "—"]]
            assert listed[1][1].startswith("Failed: ") and listed[1][1].endswith("model is overloaded")
            assert window.runs_model.item(1, 1).toolTip() == listed[1][1].removeprefix("Failed: ")
            assert window.runs_model.item(1, 1).foreground().color().name() == QColor(RED).name()
            # the runs made the chat: named after the reminder (titles are read after the rows are shown)
            await until(lambda w=window: rows(w)[0][4] == "Reminder: Oven", message="its chat's title")
            assert window.table.columnWidth(4) >= window.table.sizeHintForColumn(4)  # whole, not "Remi…: Oven"
            shown.append((rows(window), listed))
            if SHOTS:
                window.grab().save(os.path.join(SHOTS, f"reminders-runs-{start}.png"))
        finally:
            window.hide()  # closing the last window would end the loop
            bridge.close()
            await core.close()
    assert shown[0] == shown[1]


async def test_a_reminders_words_and_a_runs_failure_that_spell_markup_show_as_words_and_load_no_file(
        window: RemindersWindow, bridge: CoreBridge, fake: FakeOpenAI, tmp_path: Path) -> None:
    """The model writes a reminder's message and name (the cron tool), and a model server its error: spelling
    <img src="/a/pipe">, the message's tooltip, the failure's and the title over the runs were read as markup, and
    Qt read the file they named as they were shown: a named pipe froze the app for good. They show as words."""
    pipe = tmp_path / "pipe"
    message, label, error = (f'Water the plants <img src="{pipe}">', f"<IMG SRC='{pipe}'> plants",
                             f"<img src={pipe}> is overloaded")
    with watched_pipe(pipe) as opened:
        reminders = bridge.core.get(Reminders)
        job = await reminders.add("desktop:plants", Every(3600, datetime.now(UTC)), message, label)
        await until(lambda: window.model.rowCount() == 1, message="listed")
        fake.add({"status": 400, "body": {"error": {"message": error, "type": "invalid_request_error"}}})
        await reminders.run_now(job.id)
        await until(lambda: rows(window)[0][3] == "Failed", message="its failed run")
        window.table.selectRow(0)
        await until(lambda: window.runs_table.isVisible(), message="its runs")
        window.grab()  # laid out and painted, as on screen
        table, runs = window.table, window.runs_table
        said = hover_tip(table.viewport(), table.visualRect(window.model.index(0, 0)).center())
        why = hover_tip(runs.viewport(), runs.visualRect(window.runs_model.index(0, 1)).center())
        title = window.runs_title
    assert said == message
    assert why.endswith(error)
    assert title.text() == f"Last runs of “{job.label}”" and job.label.startswith("<IMG SRC='")  # shortened
    assert opened == [], "a reminder's words read the pipe they named"


async def test_a_change_the_reminders_file_cannot_take_is_said(window: RemindersWindow, bridge: CoreBridge) -> None:
    """Pause or Delete when the reminders cannot be saved (a full disk; here a folder where the file's lock goes):
    the table showed the change and nothing said it was not kept, so a restart brought the reminder back as it was.
    The window says so, and why."""
    reminders = bridge.core.get(Reminders)
    await reminders.add("desktop:trip", Every(600, datetime.now(UTC)), "Check the oven", "Oven")
    await until(lambda: window.model.rowCount() == 1, message="the job shows up")
    lock = Path(bridge.core.home.state_dir / "cron_jobs.json.lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()
    window.table.selectRow(0)
    window.pause_button.click()
    await until(lambda: "could not be saved" in window.notice.label.text(), message="the failure said")
    assert "Is a directory" in window.notice.label.text()

    async def confirm(title: str, text: str, action: str) -> bool:
        return True

    window.confirm = confirm
    window.table.selectRow(0)
    assert not await window.delete()
    assert "could not be saved" in window.notice.label.text()


async def test_a_reminder_gone_while_delete_asked_is_named_by_its_name(
        window: RemindersWindow, bridge: CoreBridge) -> None:
    """Delete asks first; a one-shot that ran meanwhile (or a delete elsewhere) is gone by the answer. The window
    said "no scheduled job with id '3fa2c1' (ids: none)", the words meant for the model, naming an id the person
    never sees. It names the reminder as the table did, and says what happened."""
    reminders = bridge.core.get(Reminders)
    job = await reminders.add("desktop:trip", Every(600, datetime.now(UTC)), "Check the oven", "Oven")
    await until(lambda: window.model.rowCount() == 1, message="the job shows up")

    async def confirm(title: str, text: str, action: str) -> bool:
        await reminders.remove(job.id)  # it went away while the question was open
        return True

    window.confirm = confirm
    window.table.selectRow(0)
    assert not await window.delete()
    said = window.notice.label.text()
    assert "“Oven” is no longer there" in said and job.id not in said

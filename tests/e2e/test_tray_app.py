"""The real app on an X desktop with an XEmbed tray (trayer) and a notification daemon (dunst), driven
like a user would: clicks and keys through xdotool, notifications through dunstctl. One app process
serves the module; the tests run in order and each leaves the chat and quick prompt hidden. A second app
(another home) meets the first one's hotkey and runs a reminder that came due while it was closed.
Screenshots of every step land in tests/artifacts/."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from desktop.reminders.jobs import Job, JobStore, render
from desktop.scheduler.schedules import At, Cron
from desktop.session.session import SessionStore
from tests.e2e.conftest import make_home
from tests.e2e.xdesktop import DIE_WITH_US, REPO, AppProcess, Desktop, Window, wait_for
from tests.fakeserver import FakeOpenAI
from tests.subagents.test_subagents import model

pytestmark = pytest.mark.e2e

CHAT = "Nanobot — "  # the chat window's title ("Nanobot", to which Qt appends " — Nanobot Tray")
QUICK = "Quick prompt"


@pytest.fixture(scope="module")
def app(desktop: Desktop, model_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    home = make_home(tmp_path_factory.mktemp("tray-app") / "home", model_server)
    running = AppProcess(desktop, home)
    running.wait_log(r"agent ready", timeout=90)
    yield running
    running.stop()


_last_click = [0.0]


def _click_icon(desktop: Desktop, button: int = 1) -> None:
    """Click the icon; clicks closer together than a double-click interval would count as one double click."""
    time.sleep(max(0.0, _last_click[0] + 0.8 - time.monotonic()))
    icon = desktop.tray_icon()
    desktop.click(icon.x + icon.width // 2, icon.y + icon.height // 2, button)
    _last_click[0] = time.monotonic()


def _chat(desktop: Desktop) -> Window | None:
    return next((w for w in desktop.windows() if w.name.startswith(CHAT) and w.width > 200), None)


def _show_chat(desktop: Desktop) -> Window:
    if _chat(desktop) is None:
        _click_icon(desktop)
    return wait_for(lambda: _chat(desktop), 20, "the chat window")


def _hide_chat(desktop: Desktop) -> None:
    if _chat(desktop) is not None:
        _click_icon(desktop)
    wait_for(lambda: _chat(desktop) is None, 20, "the chat window to hide")


def _assistant_messages(home: Path) -> list[str]:
    found = []
    for path in sorted((home / "data" / "sessions").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("role") == "assistant" and isinstance(record.get("content"), str):
                found.append(record["content"])
    return found


def _type_into_chat(desktop: Desktop, chat: Window, text: str) -> None:
    desktop.xdo("windowfocus", "--sync", chat.wid)
    desktop.xdo("type", "--delay", "12", text)
    desktop.xdo("key", "Return")


def test_clicking_the_tray_icon_toggles_the_chat_window(desktop: Desktop, app: AppProcess) -> None:
    icon = desktop.tray_icon()
    assert icon.width <= 48 and icon.y < 40  # docked in the panel at the top
    desktop.screenshot("e2e-01-tray-icon")
    assert _chat(desktop) is None  # a configured app starts quietly in the tray
    _click_icon(desktop)
    chat = wait_for(lambda: _chat(desktop), 20, "the chat window")
    assert chat.width > 400 and chat.height > 300
    desktop.screenshot("e2e-02-chat-shown")
    _click_icon(desktop)
    wait_for(lambda: _chat(desktop) is None, 20, "the chat window to hide")


def test_a_typed_message_gets_a_streamed_answer(desktop: Desktop, app: AppProcess, model_server: FakeOpenAI) -> None:
    chat = _show_chat(desktop)
    answer = "Streaming works: " + " ".join(f"word{i}" for i in range(60))
    model_server.add({"content": answer, "chunk": 6, "hang": 2.0})  # first chunk, then a 2 s stall
    before = len(model_server.requests)
    _type_into_chat(desktop, chat, "hello from xdotool")
    wait_for(lambda: len(model_server.requests) > before, 30, "the model request")
    time.sleep(0.8)  # the first chunk is on screen, the rest is still coming
    assert answer not in _assistant_messages(app.home)
    partial = desktop.screenshot("e2e-03-streaming")
    wait_for(lambda: answer in _assistant_messages(app.home), 30, "the answer saved in the session")
    desktop.changed("e2e-04-answered", partial, chat, 500)  # the transcript grew after the first chunk
    request = model_server.requests[before]
    assert request["stream"] is True and "hello from xdotool" in json.dumps(request["messages"])
    _hide_chat(desktop)


def test_ctrl_f_and_ctrl_k_find_the_earlier_message_and_esc_closes_them_first(desktop: Desktop,
                                                                             app: AppProcess) -> None:
    chat = _show_chat(desktop)
    desktop.xdo("windowfocus", "--sync", chat.wid)
    plain = desktop.settled("e2e-search-00-chat", chat)
    desktop.xdo("key", "ctrl+f")
    desktop.xdo("type", "--delay", "12", "xdotool")
    desktop.changed("e2e-search-01-find-bar", plain, chat, 200)  # the find bar, with the match marked
    found = desktop.settled("e2e-search-01-find-bar", chat)
    desktop.xdo("key", "Escape")  # closes the bar; the window stays
    desktop.changed("e2e-search-01-find-bar-closed", found, chat, 200)
    assert _chat(desktop) is not None
    desktop.xdo("key", "ctrl+k")
    desktop.xdo("type", "--delay", "12", "xdotool")
    desktop.changed("e2e-search-02-all-chats", plain, chat, 200)  # the search over all chats
    listed = desktop.settled("e2e-search-02-all-chats", chat)
    desktop.xdo("key", "Escape")
    desktop.changed("e2e-search-02-all-chats-closed", listed, chat, 200)
    assert _chat(desktop) is not None
    desktop.xdo("key", "Escape")  # nothing left open in it: Esc hides the window as before
    wait_for(lambda: _chat(desktop) is None, 20, "the chat window to hide")


def test_the_hotkey_opens_the_quick_prompt_with_and_without_numlock(desktop: Desktop, app: AppProcess) -> None:
    desktop.xdo("key", "ctrl+alt+space")
    quick = desktop.window(QUICK, timeout=10)
    assert quick.width >= 600
    desktop.screenshot("e2e-05-quick-prompt")
    desktop.xdo("key", "Escape")
    desktop.gone(QUICK)
    desktop.xdo("key", "Num_Lock")  # NumLock on: the grab must still match
    try:
        desktop.xdo("key", "ctrl+alt+space")
        desktop.window(QUICK, timeout=10)
        desktop.xdo("key", "Escape")
        desktop.gone(QUICK)
    finally:
        desktop.xdo("key", "Num_Lock")


def test_a_second_launch_hands_over_and_exits(desktop: Desktop, app: AppProcess) -> None:
    _hide_chat(desktop)
    second = app.launch()
    assert second.returncode == 0, second.stderr
    wait_for(lambda: _chat(desktop), 20, "the running app to raise its chat window")
    assert app.proc.poll() is None  # the same process, still running
    desktop.screenshot("e2e-06-second-launch-raised-chat")
    _hide_chat(desktop)

    prefilled = app.launch("--quick", "from the command line")
    assert prefilled.returncode == 0, prefilled.stderr
    desktop.window(QUICK, timeout=20)
    desktop.screenshot("e2e-07-second-launch-quick-prefilled")
    desktop.xdo("key", "Escape")
    desktop.gone(QUICK)


def test_a_reply_finished_in_the_background_notifies_and_the_notification_opens_the_chat(
        desktop: Desktop, app: AppProcess, model_server: FakeOpenAI) -> None:
    chat = _show_chat(desktop)
    model_server.add({"content": "Background answer is here.", "delay": 2.0})
    _type_into_chat(desktop, chat, "take your time")
    _click_icon(desktop)  # hide the chat while the model works
    wait_for(lambda: _chat(desktop) is None, 10, "the chat window to hide")
    wait_for(lambda: 'string "Background answer is here."' in desktop.notifications_log(), 30, "the reply's notification")
    log = desktop.notifications_log()
    assert 'string "Background answer is here."' in log and 'string "Open"' in log
    desktop.screenshot("e2e-08-notification")
    subprocess.run(["dunstctl", "action", "0"], env=desktop.env, check=True, timeout=10)  # the user clicks it
    wait_for(lambda: _chat(desktop), 20, "the chat window opened by the notification")
    desktop.screenshot("e2e-09-opened-from-notification")
    _hide_chat(desktop)


def test_a_background_task_finishing_out_of_sight_is_a_desktop_notification_naming_its_chat(
        desktop: Desktop, app: AppProcess, model_server: FakeOpenAI) -> None:
    chattiness, before = model_server.default, len(model_server.requests)
    model_server.default = model([{"task": "look up when to plant tomatoes", "label": "Tomato timing"}],
                                 subagent={"content": "Report: plant them in May.", "delay": 4})
    try:
        chat = _show_chat(desktop)
        desktop.xdo("windowfocus", "--sync", chat.wid)
        desktop.xdo("key", "ctrl+n")  # a new chat, titled by its first message
        _type_into_chat(desktop, chat, "Garden plans: when do tomatoes go in?")
        wait_for(lambda: any(r.get("tools") and r["messages"][-1].get("role") == "tool"
                             for r in model_server.requests[before:]), 60, "the chat's answer after spawning")
        _hide_chat(desktop)
        # the chat's own reply may be announced first (it can finish after the window is hidden): wait for the
        # task's summary, under the chat's name
        wait_for(lambda: 'string "Summary for you: Report: plant them in May."' in desktop.notifications_log(), 90,
                 "the task's summary announced")
        assert 'string "Garden plans: when do tomatoes go in?"' in desktop.notifications_log()
        desktop.screenshot("e2e-10-subagent-notification")
    finally:
        model_server.default = chattiness


async def _titled_chat(sessions: Path, key: str, title: str) -> None:
    store = SessionStore(sessions)
    session = await store.load(key)
    session.metadata["title"] = title
    await store.append(session, {"role": "user", "content": "Help me with the garden"},
                       {"role": "assistant", "content": "Happy to."})


def test_a_second_app_reports_the_taken_hotkey_and_runs_a_reminder_due_while_it_was_closed(
        desktop: Desktop, app: AppProcess, model_server: FakeOpenAI, tmp_path: Path) -> None:
    """Its reminder runs at start (within the grace), in its chat, and a desktop notification names that chat;
    the command line, handed to the running app, lists what is left."""
    home = make_home(tmp_path / "other-home", model_server)
    asyncio.run(_titled_chat(home / "data" / "sessions", "desktop:garden", "Garden"))
    due = datetime.now(UTC) - timedelta(minutes=10)
    JobStore(home / "data" / "state").write(render([
        Job("a1b2c3", "desktop:garden", "Remind the user to water the tomatoes", "Water", At(due), due, due),
        Job("d4e5f6", "desktop:garden", "Weekly seed order", "Seeds", Cron("0 9 * * 1", "UTC"), due,
            due + timedelta(days=3)),
    ]))
    model_server.add({"content": "Time to **water the tomatoes**!"})
    other = AppProcess(desktop, home)  # a second user of the chord
    try:
        other.wait_log(r"global hotkey: .*already used by another program", timeout=90)
        # its own notification, or one line of a group when the desktop-context keys are taken too
        wait_for(lambda: 'Global hotkey unavailable' in desktop.notifications_log(), 30,
                 "the conflict's notification (through the notifier, as every notification)")
        desktop.screenshot("e2e-11-hotkey-conflict")
        doctor = subprocess.run([*DIE_WITH_US, sys.executable, "-m", "desktop", "doctor", "--offline"],
                                env=other.env, cwd=str(REPO), capture_output=True, text=True, timeout=60)
        hotkey_line = next(line for line in doctor.stdout.splitlines() if line.startswith("hotkey:"))
        assert "Ctrl+Alt+Space is already used by another program" in hotkey_line

        wait_for(lambda: 'string "Garden: Water"' in desktop.notifications_log(), 90, "the reminder's notification")
        assert 'string "Time to water the tomatoes!"' in desktop.notifications_log()  # plain text
        desktop.screenshot("e2e-12-reminder-notification")
        listed = other.launch("cron", "list")  # handed to the running app: its jobs
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.startswith("d4e5f6 · “Seeds” · Mondays at 09:00 (UTC) · next ")
        assert "Water" not in listed.stdout
        asked = [m for m in model_server.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
        assert "Remind the user to water the tomatoes" in asked
    finally:
        assert other.stop() == 0


def test_quit_from_the_tray_menu_saves_and_exits_cleanly(desktop: Desktop, app: AppProcess,
                                                         model_server: FakeOpenAI) -> None:
    # a chat of its own to keep: pytest-xdist may hand this test to a worker whose app ran no other test of the file
    chat = _show_chat(desktop)
    model_server.add({"content": "Noted before quitting."})
    _type_into_chat(desktop, chat, "keep this across quit")
    wait_for(lambda: "Noted before quitting." in _assistant_messages(app.home), 30, "the answer saved")
    _hide_chat(desktop)
    _click_icon(desktop, button=3)
    menu = wait_for(lambda: next((w for w in desktop.windows() if w.height > 100 and w.name == "Nanobot Tray"),
                                 None), 10, "the tray menu")
    desktop.screenshot("e2e-13-tray-menu")
    # a click on the last entry, Quit, as a person would (keys sent before the menu grabbed the keyboard were lost)
    desktop.xdo("mousemove", str(menu.x + menu.width // 2), str(menu.y + menu.height - 10), "click", "1")
    assert app.proc.wait(30) == 0
    assert "quit cleanly" in app.log_text()
    assert "keep this across quit" in "".join(p.read_text() for p in (app.home / "data" / "sessions").glob("*.jsonl"))


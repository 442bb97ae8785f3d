"""A new user's first days, on the real app under Xvfb with a tray host and dunst: an empty home, first start
picks the model server found on this computer, a few chats, the server goes away (the error says why), quit
from the tray menu, start again. After the restart the sidebar lists the same chats by their titles, their
transcripts are there, and the failed turn still says why it failed. Screenshots land in tests/artifacts/."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e import localserver
from tests.e2e.localserver import LocalServer
from tests.e2e.test_tray_app import _click_icon, _show_chat, _type_into_chat
from tests.e2e.xdesktop import AppProcess, Desktop, Window, wait_for

pytestmark = pytest.mark.e2e

USE_THIS = (899, 201)  # the "Use this" button of the found server, from the chat window's top left corner
SIDEBAR_WIDTH = 250
TITLES_Y, ROW_HEIGHT = 55, 47  # the first chat's title line in the sidebar, and the distance to the next
OLDEST_ROW_Y = 160  # the third chat in the sidebar, from the window's top


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    yield from localserver.local_server()


def _sessions(home: Path) -> dict[str, list[dict[str, object]]]:
    return {path.stem: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            for path in (home / "data" / "sessions").glob("*.jsonl")}


def _answered(home: Path, text: str) -> bool:
    return any(m.get("role") == "assistant" and m.get("content") == text
               for lines in _sessions(home).values() for m in lines)


def _ask(desktop: Desktop, app: AppProcess, chat: Window, question: str) -> None:
    _type_into_chat(desktop, chat, question)
    wait_for(lambda: _answered(app.home, f"echo: {question}"), 30, f"the answer to {question!r}")


def _quit_from_tray(desktop: Desktop, app: AppProcess) -> None:
    _click_icon(desktop, button=3)
    wait_for(lambda: any(w.height > 100 and w.name == "Nanobot Tray" for w in desktop.windows()), 10, "the tray menu")
    desktop.xdo("key", "Up", "Return")  # the last entry: Quit
    assert app.proc.wait(30) == 0
    assert "quit cleanly" in app.log_text()


def _differing_pixels(first: Path, second: Path, window: Window, part: tuple[int, int, int, int] | None = None) -> int:
    """How many pixels of the window (or of its `part`: x, y, width, height from its corner) differ between two
    screenshots."""
    x, y, width, height = part or (0, 0, window.width, window.height)
    geometry = f"{width}x{height}+{window.x + x}+{window.y + y}"
    crops = []
    for number, shot in enumerate((first, second)):
        crop = shot.with_name(f"{shot.stem}-crop{number}.png")
        subprocess.run(["/usr/bin/convert", str(shot), "-crop", geometry, "+repage", str(crop)], check=True, timeout=30)
        crops.append(str(crop))
    out = subprocess.run(["/usr/bin/compare", "-metric", "AE", "-fuzz", "5%", *crops, "null:"], capture_output=True,
                         text=True, timeout=30)
    return int(float(out.stderr.split()[0]))


def test_chats_titles_and_the_failure_reason_survive_a_restart(desktop: Desktop, local_server: LocalServer,
                                                               tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    app = AppProcess(desktop, home)  # nothing in the home: no config, no chats
    try:
        chat = desktop.window("Nanobot — ", timeout=60)  # first start opens the chat window on the welcome page
        wait_for(lambda: "model ready" in app.log_text(), 90, "the model library to load")
        time.sleep(1.5)  # the search for local servers has answered
        desktop.screenshot("e2e-restart-01-first-start")
        desktop.click(chat.x + USE_THIS[0], chat.y + USE_THIS[1])
        config = home / "config.yaml"
        wait_for(lambda: config.exists() and f":{local_server.port}/v1" in config.read_text(), 20,
                 "first start to save the server it found")
        assert yaml.safe_load(config.read_text())["model"] == "openai/test"

        _ask(desktop, app, chat, "When do tomatoes go in?")
        _ask(desktop, app, chat, "And peppers?")
        desktop.xdo("key", "ctrl+n")
        _ask(desktop, app, chat, "How often should I oil a bike chain?")
        time.sleep(0.5)
        desktop.screenshot("e2e-restart-02-after-chats")

        local_server.stop()  # the model server goes away
        desktop.xdo("key", "ctrl+n")
        _type_into_chat(desktop, chat, "Are you still there?")
        reason = f"127.0.0.1:{local_server.port}"
        wait_for(lambda: any(m.get("failed") and reason in str(m.get("error"))
                             for lines in _sessions(home).values() for m in lines), 60, "the failed turn saved")
        time.sleep(1.0)
        before = desktop.screenshot("e2e-restart-03-server-stopped")
        saved = _sessions(home)
        assert len(saved) == 3  # three chats, none emptied
        _quit_from_tray(desktop, app)
    finally:
        app.stop()

    again = AppProcess(desktop, home)
    try:
        again.wait_log(r"model ready", timeout=90)
        chat = _show_chat(desktop)  # a configured app starts in the tray: a click shows the chat
        time.sleep(1.5)
        after = desktop.screenshot("e2e-restart-04-after-restart")
        assert _sessions(home) == saved  # nothing lost or rewritten by the restart
        # the same chats listed by the same titles, the same failed turn with its reason: the window looks the same
        for row in range(3):  # the titles (the line under each, "just now", may have aged meanwhile)
            assert _differing_pixels(before, after, chat, (0, TITLES_Y + row * ROW_HEIGHT, SIDEBAR_WIDTH, 16)) < 20
        transcript = (SIDEBAR_WIDTH, 0, chat.width - SIDEBAR_WIDTH, chat.height)
        assert _differing_pixels(before, after, chat, transcript) < 500
        desktop.click(chat.x + 100, chat.y + OLDEST_ROW_Y)  # the first chat, at the bottom of the list
        time.sleep(1.0)
        oldest = desktop.screenshot("e2e-restart-05-first-chat-after-restart")
        assert _differing_pixels(after, oldest, chat) > 2000  # its own transcript replaced the failed one
    finally:
        again.stop()

"""Asking about what is on screen, as a person does it on an X desktop with a window manager (openbox): select
text anywhere (PRIMARY, owned by `xsel`), press Ctrl+Alt+A, ask; focus a window (`xmessage`), press
Ctrl+Alt+Shift+A, ask. The scripted model server receives the selection quoted under the question, and the
window's picture (not the quick prompt's) as an image part. A key another program holds is reported."""

from __future__ import annotations

import base64
import shutil
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from PySide6.QtGui import QImage

from desktop.context.x11 import active_window, window_behind
from tests.e2e.conftest import make_home, start_desktop
from tests.e2e.xdesktop import DIE_WITH_US, AppProcess, Desktop, wait_for
from tests.fakeserver import FakeOpenAI

pytestmark = pytest.mark.e2e
QUICK = "Quick prompt"
SELECTED = "Invoice 2291: 14 chairs\nshipped to Oslo\ntotal 3,120 EUR"


@pytest.fixture(scope="module")
def wm_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    if shutil.which("xsel") is None or shutil.which("xmessage") is None:
        pytest.fail("xsel and xmessage are needed (install packaging/apt-packages-test.txt)")
    made = start_desktop(tmp_path_factory.mktemp("context-desktop"), wm=True)
    yield made
    made.stop()


@pytest.fixture(scope="module")
def app(wm_desktop: Desktop, model_server: FakeOpenAI,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    home = make_home(tmp_path_factory.mktemp("context-app") / "home", model_server, model="openai/gpt-4o")
    running = AppProcess(wm_desktop, home)
    running.wait_log(r"global hotkey: Ctrl\+Alt\+Shift\+A via X11 key grab", timeout=90)
    running.wait_log(r"agent ready", timeout=90)
    yield running
    running.stop()


def _own(desktop: Desktop, argv: list[str], stdin: str | None = None) -> subprocess.Popen[Any]:
    proc = subprocess.Popen([*DIE_WITH_US, *argv], env=desktop.env, stdin=subprocess.PIPE if stdin else None)
    if stdin is not None:
        assert proc.stdin is not None
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    return proc


def _last_user(server: FakeOpenAI) -> Any:
    return [m for m in server.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]


def _ask(desktop: Desktop, server: FakeOpenAI, question: str) -> None:
    before = len(server.requests)
    desktop.xdo("type", "--delay", "12", question)
    desktop.xdo("key", "Return")
    wait_for(lambda: len(server.requests) > before, 60, "the question to reach the model server")


def test_ctrl_alt_a_attaches_the_primary_selection_and_sends_it_quoted(wm_desktop: Desktop, app: AppProcess,
                                                                       model_server: FakeOpenAI) -> None:
    owner = _own(wm_desktop, ["xsel", "--primary", "--input", "--nodetach"], SELECTED)
    try:
        wait_for(lambda: "Invoice 2291" in subprocess.run(["xsel", "--primary", "--output"], env=wm_desktop.env,
                                                           capture_output=True, text=True, timeout=10).stdout,
                 10, "xsel to own PRIMARY")
        wm_desktop.xdo("key", "ctrl+alt+a")
        wm_desktop.window(QUICK, timeout=10)
        time.sleep(0.5)  # drawn
        wm_desktop.screenshot("context-01-selection-chip")
        model_server.add({"content": "14 chairs went to Oslo."})
        _ask(wm_desktop, model_server, "Where did the chairs go?")
    finally:
        owner.terminate()
        owner.wait(10)
    sent = _last_user(model_server)
    assert isinstance(sent, str)
    assert sent.endswith("Where did the chairs go?\n\nSelected text:\n> Invoice 2291: 14 chairs\n> shipped to Oslo\n"
                         "> total 3,120 EUR")
    _close_quick(wm_desktop)


def test_ctrl_alt_shift_a_sends_the_active_window_as_an_image_without_the_quick_prompt(
        wm_desktop: Desktop, app: AppProcess, model_server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> None:
    note = _own(wm_desktop, ["xmessage", "-geometry", "420x160+60+300", "-title", "Numbers",
                             "Quarterly revenue: 42 million"])
    try:
        monkeypatch.setenv("DISPLAY", wm_desktop.env["DISPLAY"])
        front = wait_for(lambda: (found := active_window()) is not None and found.title == "Numbers" and found, 15,
                         "openbox to focus the xmessage window")
        assert window_behind() == front  # nothing of this test process is on screen
        wm_desktop.xdo("key", "ctrl+alt+shift+a")
        wm_desktop.window(QUICK, timeout=10)
        app.wait_log(r"screenshot of .*Numbers", timeout=15)
        time.sleep(0.5)
        wm_desktop.screenshot("context-02-screenshot-chip")
        geometry = _geometry(wm_desktop, front.wid)
        model_server.add({"content": "42 million."})
        _ask(wm_desktop, model_server, "What is the revenue?")
    finally:
        note.terminate()
        note.wait(10)
    content = _last_user(model_server)
    assert isinstance(content, list) and content[0]["text"].endswith("What is the revenue?")
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    picture = QImage.fromData(base64.b64decode(url.split(",", 1)[1]))
    assert (picture.width(), picture.height()) == geometry  # the window alone: not the screen, not the prompt
    _close_quick(wm_desktop)


def test_a_context_key_another_program_holds_is_reported(wm_desktop: Desktop, app: AppProcess,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.hotkey import parse_chord
    from desktop.ui.hotkey.x11 import grab, release

    monkeypatch.setenv("DISPLAY", wm_desktop.env["DISPLAY"])
    display, _code, grabs = grab(parse_chord("Ctrl+Alt+F8"))  # another program holds it
    config = app.home / "config.yaml"
    saved = config.read_text(encoding="utf-8")
    try:
        settings = yaml.safe_load(saved)
        settings["hotkeys"] = {"selection": "Ctrl+Alt+F8"}
        config.write_text(yaml.safe_dump(settings), encoding="utf-8")
        wait_for(lambda: 'string "Hotkey for asking about the selection unavailable"'
                 in wm_desktop.notifications_log(), 30, "the conflict's notification")
        assert "Ctrl+Alt+F8 is already used by another program" in wm_desktop.notifications_log()
    finally:
        release(display, grabs)
        config.write_text(saved, encoding="utf-8")


def _close_quick(desktop: Desktop) -> None:
    """Esc: the first stops an answer still running, the next one closes the prompt."""
    for _ in range(3):
        desktop.xdo("key", "Escape")
        try:
            desktop.gone(QUICK, timeout=5)
            return
        except AssertionError:
            continue
    desktop.gone(QUICK, timeout=1)


def _geometry(desktop: Desktop, wid: int) -> tuple[int, int]:
    out = subprocess.run(["xdotool", "getwindowgeometry", "--shell", str(wid)], env=desktop.env,
                         capture_output=True, text=True, timeout=10).stdout
    values = dict(line.split("=", 1) for line in out.split())
    return int(values["WIDTH"]), int(values["HEIGHT"])

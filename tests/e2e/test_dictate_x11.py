"""Dictating with the key, as a person does it on an X desktop with a window manager: Ctrl+Alt+D opens the quick
prompt recording (the app's microphone is a private PulseAudio server's tone), Ctrl+Alt+D again stops it, the
scripted speech server's text is in the box and Enter asks it. Held down, the key records until it is let go
(the keyboard's auto-repeat meanwhile is not taken for presses). A key another program holds is reported."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
import yaml

from tests.e2e.conftest import make_home, start_desktop
from tests.e2e.xdesktop import AppProcess, Desktop, wait_for
from tests.fakeserver import FakeOpenAI
from tests.pulse import PulseServer, missing

pytestmark = pytest.mark.e2e
QUICK = "Quick prompt"


@pytest.fixture(scope="module")
def wm_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    made = start_desktop(tmp_path_factory.mktemp("dictate-desktop"), wm=True)
    yield made
    made.stop()


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PulseServer]:
    reason = missing()
    if reason:
        pytest.fail(reason)
    server = PulseServer(tmp_path_factory.mktemp("dictate-pulse"), "tone").start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def app(wm_desktop: Desktop, model_server: FakeOpenAI, sound: PulseServer,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppProcess]:
    home = make_home(tmp_path_factory.mktemp("dictate-app") / "home", model_server,
                     voice={"stt_model": "openai/whisper-1", "api_base": model_server.base_url})
    running = AppProcess(wm_desktop, home, extra_env=sound.env)
    running.wait_log(r"global hotkey: Ctrl\+Alt\+D via X11 key grab", timeout=90)
    running.wait_log(r"agent ready", timeout=90)
    yield running
    running.stop()


def _recordings(app: AppProcess) -> int:
    return app.log_text().count("recording from ")


def test_ctrl_alt_d_records_into_the_quick_prompt_and_a_second_press_stops(
        wm_desktop: Desktop, app: AppProcess, model_server: FakeOpenAI) -> None:
    model_server.add_transcripts({"text": "What is the capital of Norway?"})
    before = len(model_server.uploads)
    wm_desktop.xdo("key", "ctrl+alt+d")
    wm_desktop.window(QUICK, timeout=10)
    app.wait_log(r"recording from default", timeout=15)
    time.sleep(1.0)
    wm_desktop.screenshot("dictate-01-recording")
    assert len(model_server.uploads) == before  # a tap leaves it recording
    wm_desktop.xdo("key", "ctrl+alt+d")
    wait_for(lambda: len(model_server.uploads) > before, 20, "the recording to reach the speech server")
    time.sleep(0.5)
    wm_desktop.screenshot("dictate-02-text-in-the-box")
    model_server.add({"content": "Oslo."})
    asked = len(model_server.requests)
    wm_desktop.xdo("key", "Return")
    wait_for(lambda: len(model_server.requests) > asked, 30, "the question to reach the model")
    sent = [m for m in model_server.requests[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert sent.endswith("What is the capital of Norway?")
    _close_quick(wm_desktop)


def test_holding_the_key_records_until_it_is_let_go(wm_desktop: Desktop, app: AppProcess,
                                                    model_server: FakeOpenAI) -> None:
    model_server.add_transcripts({"text": "held down"})
    before, started = len(model_server.uploads), _recordings(app)
    wm_desktop.xdo("keydown", "ctrl+alt+d")
    try:
        wm_desktop.window(QUICK, timeout=10)
        # held from when the microphone is open, as the app counts it: the device opens after the window shows
        wait_for(lambda: _recordings(app) > started, 15, "the recording to start")
        time.sleep(1.5)  # long enough for the keyboard to repeat the held key many times
        assert len(model_server.uploads) == before and _recordings(app) == started + 1
    finally:
        wm_desktop.xdo("keyup", "ctrl+alt+d")
    wait_for(lambda: len(model_server.uploads) > before, 20, "letting go to stop the recording")
    time.sleep(1.0)
    assert len(model_server.uploads) == before + 1 and _recordings(app) == started + 1  # one recording, one upload
    stopped = [float(s) for s in re.findall(r"recording stopped after ([\d.]+) s", app.log_text())]
    assert stopped[-1] >= 1.4  # when it was let go, not when the keyboard began to repeat it (0.66 s)
    wm_desktop.screenshot("dictate-03-held")
    _close_quick(wm_desktop)


def test_a_dictation_key_another_program_holds_is_reported(wm_desktop: Desktop, app: AppProcess,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.ui.hotkey import parse_chord
    from desktop.ui.hotkey.x11 import grab, release

    monkeypatch.setenv("DISPLAY", wm_desktop.env["DISPLAY"])
    display, _code, grabs = grab(parse_chord("Ctrl+Alt+F7"))  # another program holds it
    config = app.home / "config.yaml"
    saved = config.read_text(encoding="utf-8")
    try:
        settings = yaml.safe_load(saved)
        settings["hotkeys"] = {"dictate": "Ctrl+Alt+F7"}
        config.write_text(yaml.safe_dump(settings), encoding="utf-8")
        wait_for(lambda: 'string "Hotkey for dictation unavailable"' in wm_desktop.notifications_log(), 30,
                 "the conflict's notification")
        assert "Ctrl+Alt+F7 is already used by another program" in wm_desktop.notifications_log()
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

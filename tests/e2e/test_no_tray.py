"""A desktop without a system tray (plain GNOME, say): the chat opens as a normal window, explained
once, and a tray that appears later is picked up — a StatusNotifierItem host, as GNOME's AppIndicator
extension is (an XEmbed tray that appears later is adopted by Qt itself). Uses its own desktop with
openbox and no tray host at first."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import make_home, start_desktop
from tests.e2e.xdesktop import AppProcess, Desktop, wait_for
from tests.fakeserver import FakeOpenAI

pytestmark = pytest.mark.e2e

CHAT = "Nanobot — "
EXPLANATION = "No system tray"


@pytest.fixture(scope="module")
def bare_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    if shutil.which("xfce4-panel") is None:
        pytest.fail("xfce4-panel is missing (install packaging/apt-packages-test.txt)")
    made = start_desktop(tmp_path_factory.mktemp("bare-desktop"), tray="none", wm=True)
    yield made
    made.stop()


def test_without_a_tray_the_chat_is_a_window_and_a_late_tray_is_used(
        bare_desktop: Desktop, model_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> None:
    desktop = bare_desktop
    home = make_home(tmp_path_factory.mktemp("no-tray") / "home", model_server)
    app = AppProcess(desktop, home)
    try:
        desktop.window(CHAT, timeout=90)
        desktop.window(EXPLANATION, timeout=30)
        time.sleep(0.5)
        desktop.screenshot("e2e-no-tray-1-window-and-explanation")
        state = json.loads((home / "data" / "state" / "shell.json").read_text())
        assert state["no_tray_explained"] is True
        subprocess.run(["wmctrl", "-c", EXPLANATION], env=desktop.env, check=True, timeout=10)
        subprocess.run(["wmctrl", "-c", CHAT], env=desktop.env, check=True, timeout=10)  # a user closes it
        assert app.proc.wait(30) == 0  # no tray: closing the chat quits
    finally:
        app.stop()

    again = AppProcess(desktop, home)
    try:
        desktop.window(CHAT, timeout=90)
        again.wait_log("model ready", timeout=90)
        assert not any(w.name.startswith(EXPLANATION) for w in desktop.windows())  # said once is enough
        assert desktop.sni_items() == []
        desktop.start_tray_host("xfce4-panel")
        wait_for(desktop.sni_items, 30, "the app's icon registered with the new tray host")  # periodic re-check
        time.sleep(1.0)
        desktop.screenshot("e2e-no-tray-2-tray-appeared")
        subprocess.run(["wmctrl", "-c", CHAT], env=desktop.env, check=True, timeout=10)
        wait_for(lambda: not any(w.name.startswith(CHAT) for w in desktop.windows()), 10, "the chat to hide")
        time.sleep(0.5)
        assert again.proc.poll() is None  # with a tray, closing only hides
    finally:
        assert again.stop() == 0

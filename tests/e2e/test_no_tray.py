"""A desktop without a system tray (plain GNOME, say): the chat opens as a normal window, explained
once, and a tray that appears later is picked up — a StatusNotifierItem host, as GNOME's AppIndicator
extension is (an XEmbed tray that appears later is adopted by Qt itself), which gets a theme icon name it
can resolve because the app installs its icons into the user's hicolor theme at start. Uses its own desktop
with openbox and no tray host at first."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jeepney import DBusAddress, Properties
from jeepney.io.blocking import open_dbus_connection

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


def _property(bus: str, service: str, path: str, interface: str, name: str) -> object:
    with open_dbus_connection(bus=bus) as conn:
        reply = conn.send_and_get_reply(Properties(DBusAddress(path, bus_name=service, interface=interface)).get(name),
                                        timeout=5)
    return reply.body[0][1]


def test_without_a_tray_the_chat_is_a_window_and_a_late_tray_shows_the_themed_icon(
        bare_desktop: Desktop, model_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> None:
    desktop = bare_desktop
    home = make_home(tmp_path_factory.mktemp("no-tray") / "home", model_server)
    app = AppProcess(desktop, home)
    try:
        chat = desktop.window(CHAT, timeout=90)
        desktop.window(EXPLANATION, timeout=30)
        app.wait_log("agent ready", timeout=90)  # quitting before waits for the model library's import to end
        desktop.settled("e2e-no-tray-1-window-and-explanation", chat)
        state = json.loads((home / "data" / "state" / "shell.json").read_text())
        assert state["no_tray_explained"] is True
        subprocess.run(["wmctrl", "-c", EXPLANATION], env=desktop.env, check=True, timeout=10)
        subprocess.run(["wmctrl", "-c", CHAT], env=desktop.env, check=True, timeout=10)  # a user closes it
        assert app.proc.wait(30) == 0  # no tray: closing the chat quits
    finally:
        app.stop()

    again = AppProcess(desktop, home)
    try:
        chat = desktop.window(CHAT, timeout=90)
        again.wait_log("agent ready", timeout=90)
        assert not any(w.name.startswith(EXPLANATION) for w in desktop.windows())  # said once is enough
        assert desktop.sni_items() == []
        desktop.start_tray_host("xfce4-panel")
        items = wait_for(desktop.sni_items, 30, "the app's icon registered with the new tray host")  # re-checked
        service, _, path = items[0].partition("/")
        bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"]
        assert _property(bus, service, "/" + path, "org.kde.StatusNotifierItem", "IconName") == "nanobot-tray"
        theme = Path(desktop.env["XDG_DATA_HOME"]) / "icons" / "hicolor"
        assert (theme / "64x64" / "apps" / "nanobot-tray.png").is_file()
        assert (theme / "22x22" / "apps" / "nanobot-tray-working.png").is_file()
        desktop.settled("e2e-no-tray-2-tray-appeared", chat)
        subprocess.run(["wmctrl", "-c", CHAT], env=desktop.env, check=True, timeout=10)
        wait_for(lambda: not any(w.name.startswith(CHAT) for w in desktop.windows()), 10, "the chat to hide")
        time.sleep(0.5)  # time enough to quit, as it would without a tray
        assert again.proc.poll() is None  # with a tray, closing only hides
    finally:
        assert again.stop() == 0

"""A StatusNotifierItem tray host (xfce4-panel): the host gets a theme icon name it can resolve,
because the app installs its icons into the user's hicolor theme at start."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def panel_desktop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desktop]:
    made = start_desktop(tmp_path_factory.mktemp("sni-desktop"), tray="xfce4-panel")
    yield made
    made.stop()


def _property(bus: str, service: str, path: str, interface: str, name: str) -> object:
    with open_dbus_connection(bus=bus) as conn:
        reply = conn.send_and_get_reply(Properties(DBusAddress(path, bus_name=service, interface=interface)).get(name),
                                        timeout=5)
    return reply.body[0][1]


def test_the_panel_shows_the_apps_themed_icon(panel_desktop: Desktop, model_server: FakeOpenAI,
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    desktop = panel_desktop
    bus = desktop.env["DBUS_SESSION_BUS_ADDRESS"]
    app = AppProcess(desktop, make_home(tmp_path_factory.mktemp("sni") / "home", model_server))
    try:
        app.wait_log("model ready", timeout=90)
        items = wait_for(lambda: _property(bus, "org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher",
                                           "org.kde.StatusNotifierWatcher", "RegisteredStatusNotifierItems"),
                         20, "a registered tray item")
        service, _, path = str(items[0]).partition("/")
        icon_name = _property(bus, service, "/" + path, "org.kde.StatusNotifierItem", "IconName")
        assert icon_name == "nanobot-tray"
        theme = Path(desktop.env["XDG_DATA_HOME"]) / "icons" / "hicolor"
        assert (theme / "64x64" / "apps" / "nanobot-tray.png").is_file()
        assert (theme / "22x22" / "apps" / "nanobot-tray-working.png").is_file()
        time.sleep(1.0)
        desktop.screenshot("e2e-sni-panel")
    finally:
        assert app.stop() == 0

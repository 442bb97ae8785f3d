"""A desktop whose login does not unlock a keyring (XFCE, i3, minimal installs): gnome-keyring runs on the
session bus with no unlocked login keyring, and the app uses it. Going through first start with a local server
that needs no key, Test connection in Settings and a few messages must never raise the system's
"Choose password for new keyring" prompt, and the answers must come. Screenshots land in tests/artifacts/."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import localserver
from tests.e2e.conftest import start_desktop
from tests.e2e.localserver import LocalServer
from tests.e2e.test_restart_app import USE_THIS, _ask, _differing_pixels
from tests.e2e.test_tray_app import _chat
from tests.e2e.xdesktop import AppProcess, Desktop, wait_for

pytestmark = pytest.mark.e2e

SECRET_SERVICE = "keyring.backends.SecretService.Keyring"
TEST_CONNECTION = (87, 270)  # the Test connection button, from the Settings window's top left corner


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    yield from localserver.local_server()


@pytest.fixture
def keyring_desktop(tmp_path: Path) -> Iterator[Desktop]:
    if shutil.which("gnome-keyring-daemon") is None:
        pytest.fail("gnome-keyring-daemon is missing (install packaging/apt-packages-test.txt)")
    made = start_desktop(tmp_path / "desktop")
    try:
        made.start_keyring()
        yield made
    finally:
        made.stop()


def test_a_local_server_never_raises_the_keyring_prompt(keyring_desktop: Desktop, local_server: LocalServer,
                                                        tmp_path: Path) -> None:
    desktop = keyring_desktop
    home = tmp_path / "home"
    home.mkdir()
    app = AppProcess(desktop, home, extra_env={"PYTHON_KEYRING_BACKEND": SECRET_SERVICE})
    try:
        chat = desktop.window("Nanobot — ", timeout=60)
        wait_for(lambda: "model ready" in app.log_text(), 90, "the model library to load")
        time.sleep(1.5)
        desktop.screenshot("e2e-keyring-01-first-start")
        desktop.click(chat.x + USE_THIS[0], chat.y + USE_THIS[1])
        config = home / "config.yaml"
        wait_for(lambda: config.exists() and f":{local_server.port}/v1" in config.read_text(), 20,
                 "first start to save the server it found")

        desktop.xdo("windowfocus", "--sync", chat.wid)
        desktop.xdo("key", "ctrl+comma")
        settings = desktop.window("Settings", timeout=20)
        time.sleep(1.5)
        opened = desktop.screenshot("e2e-keyring-02-settings")
        desktop.click(settings.x + TEST_CONNECTION[0], settings.y + TEST_CONNECTION[1])
        time.sleep(3)
        tested = desktop.screenshot("e2e-keyring-03-tested")
        assert _differing_pixels(opened, tested, settings) > 100  # the result line came
        desktop.xdo("key", "Escape")
        desktop.gone("Settings")

        chat = wait_for(lambda: _chat(desktop), 20, "the chat window")
        _ask(desktop, app, chat, "Is the keyring quiet?")
        _ask(desktop, app, chat, "Still quiet?")
        time.sleep(0.5)
        desktop.screenshot("e2e-keyring-04-answered")
        assert desktop.keyring_prompts() == []
        assert not desktop.bus_has("org.gnome.keyring.SystemPrompter")  # never even started
    finally:
        app.stop()

    # the check can fail: a program that does read the keyring here brings the prompt up
    reader = subprocess.Popen([sys.executable, "-c", "import keyring; keyring.get_password('nanobot-tray', 'openai')"],
                              env={**app.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(desktop.keyring_prompts, 20, "the keyring prompt for a program that reads the keyring")
        desktop.screenshot("e2e-keyring-05-prompt-for-another-program")
    finally:
        reader.kill()
        reader.wait(10)

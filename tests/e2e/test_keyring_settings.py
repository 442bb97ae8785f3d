"""The real OS keyring: on a session bus of its own with an unlocked gnome-keyring (Secret Service), an API key
typed into Settings is stored there (never in config.yaml), used for the model request, and still there in a
later session. Settings and the core run in this process, on the keyring backend a desktop session gets."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import keyring
import pytest
from keyring.backends.SecretService import Keyring as SecretService

from desktop.core import build_core
from desktop.kernel import secrets
from desktop.kernel.bus import TurnError, TurnFinished
from desktop.ui.bridge import CoreBridge
from desktop.ui.settings import SettingsWindow
from tests.e2e.conftest import make_home
from tests.e2e.xdesktop import DIE_WITH_US, read_line, wait_for
from tests.fakeserver import FakeOpenAI
from tests.ui.conftest import until

pytestmark = pytest.mark.e2e

SECRET = "sk-keyring-e2e-5f0c2a9d"
PASSWORD = "e2e-password"


@contextmanager
def _keyring_session(env: dict[str, str], logs: Path) -> Iterator[str]:
    """A session bus with gnome-keyring's Secret Service on it, the login keyring (in env's XDG_DATA_HOME,
    created on first use) unlocked with PASSWORD, as a desktop login does; yields the bus address."""
    started: list[subprocess.Popen[bytes]] = []
    try:
        bus = subprocess.Popen([*DIE_WITH_US, "dbus-daemon", "--session", "--nofork", "--print-address=1"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        started.append(bus)
        address = read_line(bus.stdout.fileno(), 10, "the session bus")  # type: ignore[union-attr]
        session = {**env, "DBUS_SESSION_BUS_ADDRESS": address}
        with open(logs / "gnome-keyring.log", "ab") as log:
            daemon = subprocess.Popen([*DIE_WITH_US, "gnome-keyring-daemon", "--foreground", "--unlock",
                                       "--components=secrets"], env=session, stdin=subprocess.PIPE, stdout=log,
                                      stderr=subprocess.STDOUT)
        started.append(daemon)
        assert daemon.stdin is not None
        daemon.stdin.write(PASSWORD.encode())
        daemon.stdin.close()  # the password, as the login manager hands it over
        wait_for(lambda: "boolean true" in subprocess.run(
            ["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
             "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets"],
            env=session, capture_output=True, text=True, timeout=10).stdout, 15, "gnome-keyring on the session bus")
        yield address
    finally:
        for proc in reversed(started):
            proc.terminate()
            proc.wait(10)


async def test_a_key_saved_in_settings_lives_in_the_secret_service(
        model_server: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = [t for t in ("dbus-daemon", "gnome-keyring-daemon", "secret-tool") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"keyring test tools missing: {', '.join(missing)} (install packaging/apt-packages-test.txt)")
    home = make_home(tmp_path / "home", model_server)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    for name, value in {"HOME": tmp_path / "user", "XDG_RUNTIME_DIR": runtime, "XDG_DATA_HOME": tmp_path / "user/data",
                        "NANOBOT_TRAY_HOME": home}.items():
        monkeypatch.setenv(name, str(value))
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    previous = keyring.get_keyring()
    before = len(model_server.headers)
    try:
        with _keyring_session(dict(os.environ), tmp_path) as address:
            monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
            keyring.set_keyring(SecretService())
            core = build_core()
            await core.start()
            bridge = CoreBridge(core)
            window = SettingsWindow(bridge)
            window.show()
            try:
                form = window.model_form
                await until(lambda: form.provider.count() > 20 and "keyring" in form.keyring_note.text()
                            and not form.keyring_note.text().startswith("Checking"), timeout=60)
                assert secrets.backend_name() == "keyring.backends.SecretService.Keyring"
                assert "OS keyring (SecretService.Keyring)" in form.keyring_note.text()  # what Settings tells the user
                form.key.setText(SECRET)
                window.save_button.click()
                await until(lambda: window.status.text(), timeout=60)
                assert "Saved" in window.status.text()
                ends: list[object] = []
                bridge.event.connect(lambda e: ends.append(e) if isinstance(e, (TurnFinished, TurnError)) else None)
                bridge.send("desktop:keyring", "ping")
                await until(lambda: ends, timeout=60)
                assert isinstance(ends[0], TurnFinished)
            finally:
                await core.close()
                bridge.close()
                window.close()
                window.deleteLater()
            assert await asyncio.to_thread(secrets.get_key, "openai") == SECRET
            lookup = await asyncio.to_thread(subprocess.run, ["secret-tool", "lookup", "service", "nanobot-tray",
                                                              "username", "openai"], capture_output=True, text=True,
                                             timeout=30)
            assert lookup.stdout.strip() == SECRET  # in the Secret Service itself, as any program sees it
        assert model_server.headers[before]["authorization"] == f"Bearer {SECRET}"  # the request used it
        assert SECRET not in (home / "config.yaml").read_text()

        with _keyring_session(dict(os.environ), tmp_path) as address:  # a new login, same home
            monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
            keyring.set_keyring(SecretService())  # a new backend: nothing remembered from the first session
            assert await asyncio.to_thread(secrets.get_key, "openai") == SECRET
    finally:
        keyring.set_keyring(previous)

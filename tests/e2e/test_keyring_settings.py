"""The real OS keyring: inside `dbus-run-session` with an unlocked gnome-keyring (Secret Service),
an API key typed into Settings is stored there (never in config.yaml), used for the model request,
and still there in a later session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import make_home
from tests.e2e.xdesktop import REPO
from tests.fakeserver import FakeOpenAI

pytestmark = pytest.mark.e2e

SECRET = "sk-keyring-e2e-5f0c2a9d"
UNLOCK = 'eval "$(printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets)"; exec "$@"'


def _in_keyring_session(env: dict[str, str], *args: str) -> dict[str, object]:
    out = subprocess.run(["dbus-run-session", "--", "sh", "-c", UNLOCK, "sh",
                          sys.executable, "-m", "tests.e2e.keyring_child", *args],
                         env=env, cwd=str(REPO), capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_key_saved_in_settings_lives_in_the_secret_service(model_server: FakeOpenAI, tmp_path: Path) -> None:
    missing = [t for t in ("dbus-run-session", "gnome-keyring-daemon", "secret-tool") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"keyring test tools missing: {', '.join(missing)} (install packaging/apt-packages-test.txt)")
    home = make_home(tmp_path / "home", model_server)
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND")}
    env.update(HOME=str(tmp_path / "user"), XDG_RUNTIME_DIR=str(runtime), XDG_DATA_HOME=str(tmp_path / "user/data"),
               NANOBOT_TRAY_HOME=str(home), QT_QPA_PLATFORM="offscreen", KEYRING_PASSWORD="e2e-password",
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    before = len(model_server.headers)

    saved = _in_keyring_session(env, "save", SECRET)
    assert saved["backend"] == "keyring.backends.SecretService.Keyring"
    assert "OS keyring (SecretService.Keyring)" in str(saved["note"])  # what Settings tells the user
    assert "Saved" in str(saved["status"]) and saved["stored"] and saved["secret_tool"]
    assert saved["turn"] == "TurnFinished"
    assert model_server.headers[before]["authorization"] == f"Bearer {SECRET}"  # the request used it
    assert SECRET not in (home / "config.yaml").read_text()

    later = _in_keyring_session(env, "read")  # a new login session, same home: the key is still there
    assert later == {"key": SECRET}

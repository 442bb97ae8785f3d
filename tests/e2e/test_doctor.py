"""`nanobot-tray doctor` on a desktop session: tray host, hotkey backend, notification service."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.xdesktop import REPO, Desktop

pytestmark = pytest.mark.e2e


def test_doctor_reports_the_desktop_integration(desktop: Desktop, tmp_path: Path) -> None:
    env = {**desktop.env, "NANOBOT_TRAY_HOME": str(tmp_path / "home"),
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    out = subprocess.run([sys.executable, "-m", "desktop", "doctor", "--offline"], env=env, cwd=str(REPO),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.stdout.splitlines() if ":" in line}
    assert lines["app"] == "not running"
    assert lines["tray"] == "XEmbed system tray (_NET_SYSTEM_TRAY)"
    assert lines["hotkey"] == "Ctrl+Alt+Space via X11 key grab (free)"
    assert lines["notices"].startswith("org.freedesktop.Notifications (dunst ")

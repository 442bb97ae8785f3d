"""The built .deb, unpacked into a scratch root (dpkg -x): its program shows the tray icon on a desktop with
a tray host and runs `doctor`. Building takes minutes of CPU, too much for every CI run, so this test needs
the package built first and skips without it:

    packaging/build.sh && NANOBOT_TRAY_DEB=$(ls dist/nanobot-tray_*.deb) pytest -m e2e tests/e2e/test_deb.py
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import make_home
from tests.e2e.xdesktop import Desktop
from tests.fakeserver import FakeOpenAI

pytestmark = pytest.mark.e2e
DEB = os.environ.get("NANOBOT_TRAY_DEB", "")


@pytest.mark.skipif(not DEB, reason="set NANOBOT_TRAY_DEB to a .deb built by packaging/build.sh")
def test_the_unpacked_package_shows_its_tray_icon_and_runs_doctor(desktop: Desktop, model_server: FakeOpenAI,
                                                                  tmp_path: Path) -> None:
    root = tmp_path / "root"
    subprocess.run(["dpkg", "-x", DEB, str(root)], check=True, timeout=120)
    assert os.readlink(root / "usr" / "bin" / "nanobot-tray") == "/opt/nanobot-tray/nanobot-tray"
    assert (root / "usr" / "share" / "applications" / "nanobot-tray.desktop").is_file()
    assert (root / "usr" / "share" / "icons" / "hicolor" / "48x48" / "apps" / "nanobot-tray.png").is_file()
    program = root / "opt" / "nanobot-tray" / "nanobot-tray"
    env = {**desktop.env, "NANOBOT_TRAY_HOME": str(make_home(tmp_path / "home", model_server)),
           "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PATH": "/usr/bin:/bin"}
    log = tmp_path / "app.log"
    started = time.monotonic()
    with open(log, "wb") as out:
        app = subprocess.Popen([str(program), "-v"], env=env, stdin=subprocess.DEVNULL, stdout=out,
                               stderr=subprocess.STDOUT)
    try:
        desktop.tray_icon(timeout=60)
        print(f"cold start to tray icon from the package: {time.monotonic() - started:.2f} s")
        doctor = subprocess.run([str(program), "doctor"], env=env, capture_output=True, text=True, timeout=120)
        assert doctor.stdout.startswith("nanobot-tray ") and "config ok" in doctor.stdout, doctor.stderr
        desktop.screenshot("deb-tray")
    finally:
        app.terminate()
        app.wait(30)
    assert app.returncode == 0, log.read_text(errors="replace")[-3000:]

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


def _package_of(library: str) -> str:
    for path in (library, library.removeprefix("/usr"), "/usr" + library):
        found = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":", 1)[0]
    raise AssertionError(f"no package holds {library}")


@pytest.mark.skipif(not DEB, reason="set NANOBOT_TRAY_DEB to a .deb built by packaging/build.sh")
def test_depends_names_every_system_library_the_program_loads(tmp_path: Path) -> None:
    subprocess.run(["dpkg", "-x", DEB, str(tmp_path)], check=True, timeout=120)
    bundle = tmp_path / "opt" / "nanobot-tray"
    files = [str(p) for p in bundle.rglob("*") if p.is_file() and (".so" in p.name or p.name == "nanobot-tray")]
    ldd = subprocess.run(["ldd", *files], env={"LD_LIBRARY_PATH": str(bundle / "_internal")}, capture_output=True,
                         text=True, timeout=300)
    outside = {line.split()[2] for line in ldd.stdout.splitlines()
               if "=>" in line and len(line.split()) > 2 and line.split()[2].startswith("/")
               and not line.split()[2].startswith(str(tmp_path))}
    assert "not found" not in ldd.stdout
    depends = subprocess.run(["dpkg-deb", "-f", DEB, "Depends"], capture_output=True, text=True, check=True).stdout
    declared = {item.strip().split(" ")[0] for item in depends.split(",")}
    assert {_package_of(library) for library in outside} <= declared
    assert {"libc6", "libxcb1", "libgl1", "bubblewrap", "socat"} <= declared


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

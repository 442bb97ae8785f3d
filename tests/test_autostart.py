"""Start at login: the autostart entry a Linux session would run."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from desktop import autostart

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="freedesktop autostart is Linux-only")


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def _entry(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[Desktop Entry]"
    return dict(line.split("=", 1) for line in lines[1:] if line)


def test_enable_writes_an_entry_that_starts_this_install(config_home: Path, home_dir: Path) -> None:
    assert not autostart.is_enabled()
    autostart.set_enabled(True)
    path = config_home / "autostart" / "nanobot-tray.desktop"
    assert autostart.is_enabled() and autostart.autostart_file() == path
    entry = _entry(path)
    assert entry["Type"] == "Application" and entry["Icon"] == "nanobot-tray"
    argv = shlex.split(entry["Exec"])
    assert argv[:2] == ["env", f"NANOBOT_TRAY_HOME={home_dir.resolve()}"]  # the same home at login
    # the command really is this install: ask it for its version
    out = subprocess.run([*argv, "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.startswith("nanobot-tray ")


def test_disable_removes_the_entry(config_home: Path) -> None:
    autostart.set_enabled(True)
    autostart.set_enabled(False)
    assert not autostart.is_enabled()
    assert not (config_home / "autostart" / "nanobot-tray.desktop").exists()
    autostart.set_enabled(False)  # already off: still fine


def test_an_entry_switched_off_by_the_desktop_counts_as_off(config_home: Path) -> None:
    autostart.set_enabled(True)
    path = autostart.autostart_file()
    path.write_text(path.read_text(encoding="utf-8") + "Hidden=true\n", encoding="utf-8")
    assert not autostart.is_enabled()

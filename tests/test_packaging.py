"""The desktop menu entry: installing it gives a launcher that runs our program and finds its icons."""

from __future__ import annotations

import configparser
import os
import struct
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
INSTALL = REPO / "packaging" / "install-desktop-entry.sh"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
STATES = ("nanobot-tray", "nanobot-tray-working", "nanobot-tray-attention")


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


def install(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home)}
    return subprocess.run(["bash", str(INSTALL), *args], capture_output=True, text=True, env=env, timeout=30)


def test_installed_entry_launches_the_given_program_with_its_icon(tmp_path: Path) -> None:
    program = tmp_path / "my apps" / "nanobot-tray"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)

    result = install(tmp_path, str(program))

    assert result.returncode == 0, result.stderr
    share = tmp_path / ".local" / "share"
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]  (keys are case-sensitive)
    entry.read(share / "applications" / "nanobot-tray.desktop", encoding="utf-8")
    fields = entry["Desktop Entry"]
    assert fields["Type"] == "Application"
    assert fields["Exec"] == f'"{program}"'
    assert fields["Icon"] == "nanobot-tray"
    assert "Utility" in fields["Categories"].split(";")
    for state in STATES:
        assert (share / "icons" / "hicolor" / "scalable" / "apps" / f"{state}.svg").is_file()
        for size in SIZES:
            png = share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{state}.png"
            assert png_size(png) == (size, size)


def test_tray_icons_are_shipped_at_tray_size() -> None:
    for state in STATES:
        assert png_size(REPO / "resources" / "icons" / f"{state}.png") == (64, 64)


def test_install_refuses_a_missing_program_and_writes_nothing(tmp_path: Path) -> None:
    result = install(tmp_path, str(tmp_path / "nowhere" / "nanobot-tray"))

    assert result.returncode == 1
    assert "is not an executable file" in result.stderr
    assert not (tmp_path / ".local").exists()


def test_install_follows_xdg_data_home(tmp_path: Path) -> None:
    program = tmp_path / "nanobot-tray"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "xdg")}

    result = subprocess.run(["bash", str(INSTALL), str(program)], capture_output=True, text=True, env=env,
                            timeout=30)

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "xdg" / "applications" / "nanobot-tray.desktop").is_file()
    assert (tmp_path / "xdg" / "icons" / "hicolor" / "22x22" / "apps" / "nanobot-tray.png").is_file()
    assert not (tmp_path / "home").exists()
    assert os.access(INSTALL, os.X_OK), "the script is documented as directly runnable"

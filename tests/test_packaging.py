"""The desktop menu entry: installing it gives a launcher that runs our program and finds its icons;
uninstalling removes exactly that."""

from __future__ import annotations

import configparser
import os
import struct
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
STATES = ("nanobot-tray", "nanobot-tray-working", "nanobot-tray-attention")


def png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", header[16:24])


def cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO), **env}
    return subprocess.run([sys.executable, "-m", "desktop", *args], capture_output=True, text=True, env=full_env,
                          timeout=60, cwd=str(REPO))


def read_entry(path: Path) -> configparser.SectionProxy:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]  (keys are case-sensitive)
    entry.read(path, encoding="utf-8")
    return entry["Desktop Entry"]


def test_installed_entry_launches_this_install_with_its_icon(tmp_path: Path) -> None:
    result = cli(tmp_path, "install-desktop-entry")

    assert result.returncode == 0, result.stderr
    share = tmp_path / ".local" / "share"
    fields = read_entry(share / "applications" / "nanobot-tray.desktop")
    assert fields["Type"] == "Application"
    program = fields["Exec"].split()[0]
    assert os.path.isabs(program.strip('"')), "menus do not see a virtualenv's PATH"
    assert fields["Icon"] == "nanobot-tray"
    assert "Utility" in fields["Categories"].split(";")
    for state in STATES:
        assert (share / "icons" / "hicolor" / "scalable" / "apps" / f"{state}.svg").is_file()
        for size in SIZES:
            png = share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{state}.png"
            assert png_size(png) == (size, size)


def test_uninstall_removes_only_what_install_wrote(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    mine = xdg / "applications" / "my-editor.desktop"
    mine.parent.mkdir(parents=True)
    mine.write_text("[Desktop Entry]\n")
    assert cli(tmp_path, "install-desktop-entry", XDG_DATA_HOME=str(xdg)).returncode == 0
    assert (xdg / "icons" / "hicolor" / "22x22" / "apps" / "nanobot-tray.png").is_file()
    assert not (tmp_path / ".local").exists()

    result = cli(tmp_path, "uninstall-desktop-entry", XDG_DATA_HOME=str(xdg))

    assert result.returncode == 0, result.stderr
    assert not (xdg / "applications" / "nanobot-tray.desktop").exists()
    assert not [p for p in (xdg / "icons").rglob("*") if p.is_file()]
    assert mine.read_text() == "[Desktop Entry]\n"
    assert "No menu entry" in cli(tmp_path, "uninstall-desktop-entry", XDG_DATA_HOME=str(xdg)).stdout


def test_packages_get_the_entry_with_their_own_command(tmp_path: Path) -> None:
    result = cli(tmp_path, "install-desktop-entry", "--data-dir", str(tmp_path / "usr" / "share"),
                 "--exec", "nanobot-tray")

    assert result.returncode == 0, result.stderr
    assert read_entry(tmp_path / "usr" / "share" / "applications" / "nanobot-tray.desktop")["Exec"] == "nanobot-tray"


def test_tray_icons_are_shipped_at_tray_size() -> None:
    for state in STATES:
        assert png_size(REPO / "resources" / "icons" / f"{state}.png") == (64, 64)

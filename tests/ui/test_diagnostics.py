"""`nanobot-tray doctor`'s desktop lines: which way a screenshot is taken here, and on Wayland whether the
desktop portal that takes it is there (a stand-in on a session bus of the test's own)."""

from __future__ import annotations

from pathlib import Path

from desktop.context.portal import NEEDS_PORTAL
from tests.busstandin import private_bus
from tests.cli.in_process import run_main
from tests.portalstandin import ScreenshotPortal


def _screenshot_line(home: Path, env: dict[str, str]) -> str:
    ran = run_main(home, "doctor", "--offline", env_extra=env)
    assert ran.returncode == 0, ran.stderr
    return next(line for line in ran.stdout.splitlines() if line.startswith("screenshot: "))


def test_doctor_names_the_screenshot_route_in_force(home_dir: Path, tmp_path: Path) -> None:
    # an X session with a Wayland compositor nested in it: the windows a person works in are X windows
    x11 = {"DISPLAY": ":1000", "XDG_SESSION_TYPE": "x11", "WAYLAND_DISPLAY": "wayland-nested",
           "DBUS_SESSION_BUS_ADDRESS": ""}
    assert _screenshot_line(home_dir, x11) == (
        "screenshot: X11: the window in front, or a region picked on the frozen screen")
    with private_bus(tmp_path) as address:
        wayland = {"DISPLAY": "", "WAYLAND_DISPLAY": "wayland-test", "XDG_SESSION_TYPE": "wayland",
                   "DBUS_SESSION_BUS_ADDRESS": address}
        assert _screenshot_line(home_dir, wayland) == f"screenshot: {NEEDS_PORTAL}"
        stand_in = ScreenshotPortal(address, tmp_path, b"", "never")
        try:
            assert _screenshot_line(home_dir, wayland) == (
                "screenshot: xdg-desktop-portal Screenshot (version 2): your desktop's own dialog (Wayland)")
        finally:
            stand_in.close()
        assert stand_in.asked == []  # asking whether it is there takes no screenshot

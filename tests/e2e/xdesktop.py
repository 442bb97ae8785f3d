"""A private headless desktop for end-to-end tests, and the real app running on it.

Desktop: Xvfb (-noreset, display picked by -displayfd), its own session D-Bus, a tray host (trayer for
XEmbed, xfce4-panel for StatusNotifierItem, or none), optionally openbox, dunst as the notification
daemon and a dbus-monitor log of every notification. Every process is started and stopped by its own
Popen handle, and dies with the test process if that dies first (DIE_WITH_US). AppProcess runs
`python -m desktop` against it; screenshots go to tests/artifacts/, and the screen is compared by pixels
(`differing_pixels`), as a person looking at it would notice a change."""

from __future__ import annotations

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts"
TOOLS = ("Xvfb", "dbus-daemon", "dbus-monitor", "dunst", "dunstctl", "xdotool", "import", "compare", "setpriv")
TRAY_TOOLS = {"trayer": "trayer", "xfce4-panel": "xfce4-panel", "none": None}
APP_CLASS = "nanobot-tray"
# Prefixed to every long-lived process a test starts: it gets SIGTERM when the process that started it dies, so a
# run that is killed or times out leaves no desktop, app or server behind (util-linux, always installed).
DIE_WITH_US = ["setpriv", "--pdeathsig", "TERM", "--"]
SETTLED = 50  # pixels: fewer differ between two screenshots 0.2 s apart, so nothing is being drawn


def missing_tools(tray: str = "trayer", wm: bool = False) -> list[str]:
    needed = [*TOOLS, *([TRAY_TOOLS[tray]] if TRAY_TOOLS[tray] else []), *(["openbox", "wmctrl"] if wm else [])]
    return [tool for tool in needed if shutil.which(tool) is None]


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


@dataclass
class Window:
    wid: str
    name: str
    x: int
    y: int
    width: int
    height: int


class Desktop:
    def __init__(self, root: Path, tray: str = "trayer", wm: bool = False) -> None:
        self.root, self.tray, self.wm = root, tray, wm
        self.procs: list[subprocess.Popen[Any]] = []
        self.env: dict[str, str] = {}
        self.logs = root / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    # ----- lifetime
    def start(self) -> Desktop:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        home = self.root / "user"
        runtime = self.root / "run"
        for folder in (home, runtime):
            folder.mkdir(parents=True, exist_ok=True)
        runtime.chmod(0o700)
        env = {k: v for k, v in os.environ.items()
               if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS")}
        env.update(HOME=str(home), XDG_RUNTIME_DIR=str(runtime), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"))
        read_fd, write_fd = os.pipe()
        self._spawn("xvfb", ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1280x800x24",
                             "-nolisten", "tcp", "-noreset"], env, pass_fds=(write_fd,))
        os.close(write_fd)
        number = read_line(read_fd, 15, "Xvfb to choose a display")
        os.close(read_fd)
        env["DISPLAY"] = f":{number}"
        bus = self._spawn("dbus", ["dbus-daemon", "--session", "--nofork", "--print-address=1"], env,
                          stdout=subprocess.PIPE)
        env["DBUS_SESSION_BUS_ADDRESS"] = read_line(bus.stdout.fileno(), 10, "the session bus")  # type: ignore[union-attr]
        self.env = env
        if shutil.which("xsetroot"):
            subprocess.run(["xsetroot", "-solid", "#3a6ea5"], env=env, timeout=10)  # readable screenshots
        if self.wm:
            self._spawn("openbox", ["openbox"], env)
            wait_for(lambda: "window id" in self._run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"]), 15,
                     "openbox")
        if self.tray != "none":
            self.start_tray_host(self.tray)
        self._spawn("dunst", ["dunst", "-verbosity", "info"], env)
        self._spawn("dbus-monitor", ["dbus-monitor", "--session", "interface='org.freedesktop.Notifications'"], env)
        wait_for(lambda: self.bus_has("org.freedesktop.Notifications"), 15, "dunst on the session bus")

    def start_tray_host(self, kind: str) -> None:
        """trayer (XEmbed) or xfce4-panel (StatusNotifierItem); also used to add a tray host later."""
        if kind == "trayer":
            self._spawn("trayer", ["trayer", "--edge", "top", "--align", "right", "--widthtype", "request",
                                   "--height", "32", "--SetDockType", "true", "--transparent", "false",
                                   "--tint", "0x202020", "--expand", "true"], self.env)
            wait_for(self.xembed_tray_present, 15, "trayer to own the system tray selection")
        else:
            self._spawn("panel", ["xfce4-panel", "--disable-wm-check"], self.env)
            wait_for(lambda: self.bus_has("org.kde.StatusNotifierWatcher"), 30, "xfce4-panel's SNI watcher")

    def start_keyring(self) -> None:
        """gnome-keyring's Secret Service on this desktop's bus, with no login keyring unlocked (none exists in
        the fresh home): as on a desktop whose login does not unlock one. Using it pops up the system prompt."""
        self._spawn("keyring", ["gnome-keyring-daemon", "--foreground", "--components=secrets"], self.env)
        wait_for(lambda: self.bus_has("org.freedesktop.secrets"), 15, "gnome-keyring on the session bus")

    def keyring_prompts(self) -> list[str]:
        """The system keyring's password prompts (gcr-prompter windows) on screen, by window id."""
        return self._run(["xdotool", "search", "--onlyvisible", "--class", "gcr-prompter"]).split()

    def sni_items(self) -> list[str]:
        """Items registered with the StatusNotifierItem host ("service/path")."""
        out = self._run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.StatusNotifierWatcher",
                         "/StatusNotifierWatcher", "org.freedesktop.DBus.Properties.Get",
                         "string:org.kde.StatusNotifierWatcher", "string:RegisteredStatusNotifierItems"])
        return re.findall(r'string "([^"]+)"', out)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.procs.clear()

    def _spawn(self, name: str, argv: list[str], env: dict[str, str], stdout: Any = None,
               **kw: Any) -> subprocess.Popen[Any]:
        with open(self.logs / f"{name}.log", "ab") as out, open(self.logs / f"{name}.err", "ab") as err:
            proc = subprocess.Popen([*DIE_WITH_US, *argv], env=env, stdin=subprocess.DEVNULL, stdout=stdout or out,
                                    stderr=err, **kw)
        self.procs.append(proc)
        return proc

    # ----- looking and acting
    def _run(self, argv: list[str], check: bool = False, timeout: float = 20) -> str:
        out = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and out.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed: {out.stderr.strip()}")
        return out.stdout

    def xdo(self, *args: str) -> str:
        return self._run(["xdotool", *args], check=True)

    def windows(self, visible: bool = True) -> list[Window]:
        found = []
        args = ["search", *(["--onlyvisible"] if visible else []), "--class", APP_CLASS]
        for wid in self._run(["xdotool", *args]).split():
            geometry = dict(re.findall(r"(\w+)=(\d+)", self._run(["xdotool", "getwindowgeometry", "--shell", wid])))
            if not geometry:
                continue  # closed meanwhile
            name = self._run(["xdotool", "getwindowname", wid]).strip()
            found.append(Window(wid, name, int(geometry["X"]), int(geometry["Y"]),
                                int(geometry["WIDTH"]), int(geometry["HEIGHT"])))
        return found

    def window(self, title: str, timeout: float = 20) -> Window:
        """Wait until a visible app window whose title starts with `title` is mapped."""
        return wait_for(lambda: next((w for w in self.windows() if w.name.startswith(title)), None), timeout,
                        f"a visible window titled {title!r}", interval=0.1)

    def gone(self, title: str, timeout: float = 20) -> None:
        wait_for(lambda: not any(w.name.startswith(title) for w in self.windows()), timeout,
                 f"the window {title!r} to hide", interval=0.1)

    def tray_icon(self, timeout: float = 20) -> Window:
        """The app's XEmbed icon: its small window docked in trayer."""
        return wait_for(lambda: next((w for w in self.windows() if w.width < 64 and w.height < 64), None),
                        timeout, "the tray icon", interval=0.1)

    def click(self, x: int, y: int, button: int = 1) -> None:
        self.xdo("mousemove", str(x), str(y), "click", str(button))

    def screenshot(self, name: str) -> Path:
        """The whole screen, kept in this desktop's folder (what tests compare: another run cannot overwrite it)
        and copied to tests/artifacts/ for people to look at."""
        shots = self.root / "shots"
        shots.mkdir(exist_ok=True)
        path = shots / f"{name}.png"
        self._run(["import", "-window", "root", str(path)], check=True)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, ARTIFACTS / path.name)
        return path

    def differing_pixels(self, first: Path, second: Path, window: Window,
                         part: tuple[int, int, int, int] | None = None) -> int:
        """How many pixels of the window (or of its `part`: x, y, width, height from its corner) differ between
        two screenshots (5 % fuzz: antialiasing is no difference)."""
        x, y, width, height = part or (0, 0, window.width, window.height)
        geometry = f"{width}x{height}+{window.x + x}+{window.y + y}"
        out = subprocess.run(["compare", "-metric", "AE", "-fuzz", "5%", "-extract", geometry, str(first), str(second),
                              "null:"], capture_output=True, text=True, timeout=30)
        return int(float(out.stderr.split()[0]))

    def settled(self, name: str, window: Window, timeout: float = 20, still: float = 0.2) -> Path:
        """A screenshot once the window has stopped changing: the screenshots 0.2 s apart over `still` seconds
        differ in fewer than SETTLED pixels (a blinking text cursor is allowed). What a later screenshot is compared
        with must be drawn: give a longer `still` where the app redraws after a pause (the chat list, refreshed on a
        timer and a disk read after a turn ends)."""
        shot = self.screenshot(name)
        deadline = time.monotonic() + timeout
        unchanged_since = time.monotonic()
        while True:
            time.sleep(0.2)
            previous, shot = shot.rename(shot.with_name(f"{name}-before.png")), self.screenshot(name)
            if self.differing_pixels(previous, shot, window) >= SETTLED:
                unchanged_since = time.monotonic()
            elif time.monotonic() - unchanged_since >= still:
                return shot
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for the window {window.name!r} to "
                                     "stop changing")

    def changed(self, name: str, reference: Path, window: Window, more_than: int,
                part: tuple[int, int, int, int] | None = None, timeout: float = 20) -> Path:
        """A screenshot once more than `more_than` pixels of the window (or its `part`) differ from `reference`."""
        def differs() -> Path | None:
            shot = self.screenshot(name)
            return shot if self.differing_pixels(reference, shot, window, part) > more_than else None
        return wait_for(differs, timeout, f"{more_than}+ pixels of {window.name!r} to change ({name})", interval=0.2)

    def notifications_log(self) -> str:
        return (self.logs / "dbus-monitor.log").read_text(errors="replace")  # written by _spawn

    def bus_has(self, name: str) -> bool:
        out = self._run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                         "org.freedesktop.DBus.NameHasOwner", f"string:{name}"])
        return "boolean true" in out

    def xembed_tray_present(self) -> bool:
        from Xlib import display

        d = display.Display(self.env["DISPLAY"])
        try:
            return d.get_selection_owner(d.intern_atom("_NET_SYSTEM_TRAY_S0")) != 0
        finally:
            d.close()


class AppProcess:
    """The real app (`python -m desktop -v`) with its own home, logging to a file."""

    def __init__(self, desktop: Desktop, home: Path, *args: str, extra_env: dict[str, str] | None = None) -> None:
        self.desktop, self.home = desktop, home
        self.env = {**desktop.env, "NANOBOT_TRAY_HOME": str(home),
                    "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",  # never prompt for a keyring
                    "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(extra_env or {})}
        self.log = home.parent / f"{home.name}-app.log"  # a restart with the same home appends to it
        self._log_start = self.log.stat().st_size if self.log.exists() else 0
        self.started = time.monotonic()
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen([*DIE_WITH_US, sys.executable, "-m", "desktop", "-v", *args], env=self.env,
                                         cwd=str(REPO), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)

    def log_text(self) -> str:
        """What this process logged (not an earlier run's lines in the same file)."""
        if not self.log.exists():
            return ""
        with open(self.log, "rb") as log:
            log.seek(self._log_start)
            return log.read().decode(errors="replace")

    def wait_log(self, pattern: str, timeout: float = 60) -> re.Match[str]:
        def seen() -> re.Match[str] | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"the app exited ({self.proc.returncode}) before logging {pattern!r}:\n"
                                     f"{self.log_text()[-3000:]}")
            return re.search(pattern, self.log_text())
        return wait_for(seen, timeout, f"the app to log {pattern!r}", interval=0.1)

    def launch(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """A second `nanobot-tray` launch with the same home (it should hand over and exit)."""
        return subprocess.run([*DIE_WITH_US, sys.executable, "-m", "desktop", *args], env=self.env, cwd=str(REPO),
                              capture_output=True, text=True, timeout=timeout)

    def stop(self, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode


def read_line(fd: int, timeout: float, what: str) -> str:
    data = b""
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise AssertionError(f"timed out waiting for {what}")
        chunk = os.read(fd, 256)
        if not chunk:
            raise AssertionError(f"{what}: the process exited")
        data += chunk
    return data.split(b"\n", 1)[0].decode().strip()

"""Where everything the app reads and writes lives (one home, relocatable for tests)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import platformdirs

APP_NAME = "nanobot-tray"
HOME_ENV = "NANOBOT_TRAY_HOME"
_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # desktop/


@dataclass(frozen=True)
class Home:
    """The app's directories. `workspace` is the default; config may name another."""

    config_file: Path
    data_dir: Path
    default_workspace: Path

    def workspace(self, configured: str | None) -> Path:
        """The workspace in force: `workspace` from config.yaml when it names one, else the default."""
        return Path(configured).expanduser().resolve() if configured else self.default_workspace

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def tool_outputs_dir(self) -> Path:
        return self.data_dir / "tool-outputs"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def pasted_dir(self) -> Path:
        """Pictures and long texts pasted into a message, kept as files to attach (never in the workspace,
        where a sandboxed command could change them before they are sent)."""
        return self.data_dir / "pasted"

    @property
    def state_dir(self) -> Path:
        """Small runtime state files (cron jobs, window geometry)."""
        return self.data_dir / "state"


def inside(path: Path, root: Path) -> bool:
    """Whether `path` is `root` or below it (both already resolved: no symlink games here)."""
    return path == root or root in path.parents


def home() -> Home:
    """Resolve the home from NANOBOT_TRAY_HOME, else the platform's standard folders."""
    root = os.environ.get(HOME_ENV)
    if root:
        base = Path(root).expanduser().resolve()
        return Home(base / "config.yaml", base / "data", base / "workspace")
    return Home(
        Path(platformdirs.user_config_dir(APP_NAME)) / "config.yaml",
        Path(platformdirs.user_data_dir(APP_NAME)),
        Path.home() / "Nanobot",
    )


@cache
def bundled(name: str) -> Path:
    """A folder shipped with the app (`resources`, or `skills` for the built-in skills). The wheel holds
    both as `desktop/resources/...`; a checkout keeps them at the top level beside `desktop/`. Looked up
    once: it does not move while the app runs, and every system prompt asks (two stats a time)."""
    installed = _PACKAGE_DIR / "resources"
    candidates = (installed if name == "resources" else installed / name, _PACKAGE_DIR.parent / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the app's bundled '{name}' folder is missing; reinstall nanobot-tray")

"""Small app-shell state that outlives a run (Do not disturb, one-time explanations, where each window was),
in home.state_dir."""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.paths import Home

log = logging.getLogger(__name__)


@dataclass
class ShellState:
    do_not_disturb: bool = False
    no_tray_explained: bool = False
    tray_close_explained: bool = False  # closing the chat said once that the app keeps running in the tray
    windows: dict[str, list[int]] = field(default_factory=dict)  # window kind -> x, y, width, height


def state_path(h: Home) -> Path:
    return h.state_dir / "shell.json"


def load_state(path: Path) -> ShellState:
    """Missing or damaged file → defaults (and a log line); unknown keys are ignored."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ShellState()
    except (OSError, ValueError) as exc:
        log.warning("%s is unreadable (%s); using defaults", path, exc)
        return ShellState()
    if not isinstance(data, dict):
        return ShellState()
    flags = {k: bool(data[k]) for k in ("do_not_disturb", "no_tray_explained", "tray_close_explained") if k in data}
    return ShellState(**flags, windows=_places(data.get("windows")))


def _places(value: Any) -> dict[str, list[int]]:
    """Window rectangles; anything that is not four whole numbers is dropped (the window is centred)."""
    if not isinstance(value, dict):
        return {}
    return {str(k): list(v) for k, v in value.items()
            if isinstance(v, list) and len(v) == 4 and all(type(n) is int for n in v)}


def save_state(path: Path, state: ShellState) -> None:
    atomic_write_text(path, json.dumps(dataclasses.asdict(state), indent=2) + "\n")

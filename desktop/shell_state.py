"""Small app-shell state that outlives a run (Do not disturb, one-time explanations), in home.state_dir."""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from desktop.atomic import atomic_write_text
from desktop.paths import Home

log = logging.getLogger(__name__)


@dataclass
class ShellState:
    do_not_disturb: bool = False
    no_tray_explained: bool = False


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
    known = {f.name for f in dataclasses.fields(ShellState)}
    return ShellState(**{k: bool(v) for k, v in data.items() if k in known})


def save_state(path: Path, state: ShellState) -> None:
    atomic_write_text(path, json.dumps(dataclasses.asdict(state), indent=2) + "\n")

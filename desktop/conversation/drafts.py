"""The message being written in a window (the chat's message box, the quick prompt), kept in the data folder as it
is typed: a quit, a crash or a logout never loses it, and the window shows it again at the next start. One small
text file per window, in the state folder (out of the sandbox's reach); none when the box is empty."""

from __future__ import annotations

import logging
from pathlib import Path

from desktop.kernel.atomic import atomic_write_text
from desktop.kernel.wellformed import well_formed

log = logging.getLogger(__name__)


def draft_path(state_dir: Path, window: str) -> Path:
    """Where `window`'s draft is kept ("chat", "quick")."""
    return state_dir / f"draft-{window}.txt"


def load_draft(path: Path) -> str:
    """The kept draft; "" when there is none or it cannot be read (logged: the box then starts empty)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        log.warning("the kept draft %s cannot be read (%s)", path, exc)
        return ""


def save_draft(path: Path, text: str) -> None:
    """Keep `text` whole (atomically: a crash leaves the old draft or the new one); a blank box keeps none. A
    character no UTF-8 file can hold (a lone surrogate pasted in) is kept as �, not a failed save."""
    if text.strip():
        atomic_write_text(path, well_formed(text))
    else:
        path.unlink(missing_ok=True)

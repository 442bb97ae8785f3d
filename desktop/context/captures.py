"""Where screenshots taken for a question are kept: the app's data folder, never the workspace (which sandboxed
commands write), so a saved chat can show and send them again after a restart."""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path

from desktop.kernel.atomic import atomic_write_bytes

FOLDER = "captures"


def keep_capture(data_dir: Path, png: bytes) -> Path:
    """Write `png` under data_dir/captures with a new, sortable name, atomically (no half picture is ever
    sent). Blocking: run it in a thread."""
    target = data_dir / FOLDER / f"screenshot-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}.png"
    atomic_write_bytes(target, png)
    return target

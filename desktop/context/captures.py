"""Where pictures taken or fetched for a question (screenshots, an MCP server's picture resources) are kept:
the app's data folder, never the workspace (which sandboxed commands write), so a saved
chat can show and send them again after a restart."""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path

from desktop.kernel.atomic import atomic_write_bytes

FOLDER = "captures"


def keep_capture(data_dir: Path, data: bytes, kind: str = "screenshot", suffix: str = ".png") -> Path:
    """Write `data` under data_dir/captures with a new, sortable name, atomically (no half picture is ever
    sent). The suffix is what says the picture's type to whoever sends it. Blocking: run it in a thread."""
    target = data_dir / FOLDER / f"{kind}-{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}{suffix}"
    atomic_write_bytes(target, data)
    return target

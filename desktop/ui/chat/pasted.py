"""What Ctrl+V brings that is not a few lines of text: a picture (a screenshot) or a long text, kept as a file
in the app's data folder (home.pasted_dir) and then attached like a dropped file. Not in the workspace: a
sandboxed command could change a file there between the paste and the send. Blocking: run in a thread."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice
from PySide6.QtGui import QImage


def save_image(image: QImage, folder: Path) -> Path:
    """The picture as a new PNG in `folder`."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # the stubs say bytes; PySide takes str
        raise OSError("the picture could not be turned into a PNG")
    return _create(folder, "Screenshot", ".png", bytes(buffer.data().data()))


def _create(folder: Path, stem: str, suffix: str, data: bytes) -> Path:
    """A file under a name nothing else has (O_EXCL): `Screenshot 2026-11-26 14.05.03.png`, then `… (2).png`."""
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{stem} {datetime.now():%Y-%m-%d %H.%M.%S}"
    for number in range(1, 100):
        path = folder / (f"{base}{suffix}" if number == 1 else f"{base} ({number}){suffix}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        return path
    raise OSError(f"{folder} already holds 99 files named {base}")

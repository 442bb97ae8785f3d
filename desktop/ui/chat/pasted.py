"""What Ctrl+V brings that is not a few lines of text: a picture (a screenshot) or a long text, kept as a file
in the app's data folder (home.pasted_dir) and then attached like a dropped file. Not in the workspace: a
sandboxed command could change a file there between the paste and the send. Blocking: run in a thread.
The chat's message box and the quick prompt both sort a paste with `attachable`."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMimeData
from PySide6.QtGui import QImage

# A paste longer than either becomes an attachment: 80 lines is ten message boxes full and more than a screen of
# bubble; 4,000 characters is about two pages of prose (1,000 tokens), where a log or a document starts, not a
# message someone would edit before sending.
LONG_CHARS = 4000
LONG_LINES = 80
TEXT_PREFIX = "Pasted text"


def attachable(source: QMimeData) -> list[str] | QImage | str | None:
    """What a paste attaches instead of typing in: the paths of files copied in a file manager, a picture, or a
    long text; None for text to type in (an app that offers text beside a picture of it, a spreadsheet, meant
    the text)."""
    files = [url.toLocalFile() for url in source.urls() if url.isLocalFile()]
    if files:
        return files
    text = source.text()  # asked once: a selection's owner may answer a second request with nothing (xsel does)
    if source.hasImage() and not text.strip():
        return QImage(source.imageData())
    return text if is_long(text) else None


def is_long(text: str) -> bool:
    """Whether a paste is too long to read in a bubble: about a screen of lines, or a few pages of prose."""
    return len(text) > LONG_CHARS or line_count(text) > LONG_LINES


def save_image(image: QImage, folder: Path) -> Path:
    """The picture as a new PNG in `folder`."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):  # type: ignore[call-overload]  # the stubs say bytes; PySide takes str
        raise OSError("the picture could not be turned into a PNG")
    return _create(folder, "Screenshot", ".png", bytes(buffer.data().data()))


def save_text(text: str, folder: Path) -> Path:
    """The text as a new UTF-8 file in `folder`, named so the chip and the model see what it is."""
    return _create(folder, TEXT_PREFIX, ".txt", text.encode("utf-8"))


def line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def text_label(text: str) -> str:
    """How a pasted text's chip names it: "Pasted text, 2,376 lines"."""
    lines = line_count(text)
    return f"{TEXT_PREFIX}, {lines:,} line{'s' if lines != 1 else ''}"


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

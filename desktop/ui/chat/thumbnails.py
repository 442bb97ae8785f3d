"""Small pictures of attached images for the composer's chips and the person's bubbles, read off the GUI thread
and kept for the run. An image in the workspace is read through desktop.workspace.access (as the model's copy
is), so a link a sandboxed command left there is not followed out of it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage

from desktop.agent.context import image_bytes
from desktop.kernel.taskset import spawn

SIZE = QSize(160, 96)  # the largest a thumbnail is drawn; smaller pictures keep their size


class Thumbnails(QObject):
    """`get(path)` answers at once: the picture when it has been read, None while it is read (then `ready`
    fires) or when it cannot be (not a picture, unreadable, refused)."""

    ready = Signal()

    def __init__(self, workspace: Callable[[], Path], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self._images: dict[str, QImage] = {}
        self._reading: set[str] = set()

    @property
    def workspace(self) -> Path:
        """The workspace in force: files in it are read without following a link out of it."""
        return self._workspace()

    def get(self, path: str) -> QImage | None:
        image = self._images.get(path)
        if image is None and path not in self._reading:
            self._reading.add(path)
            spawn(self._read(path))
        return image if image is not None and not image.isNull() else None

    async def _read(self, path: str) -> None:
        try:
            self._images[path] = await asyncio.to_thread(_scaled, path, self._workspace())
        finally:
            self._reading.discard(path)
        self.ready.emit()


def _scaled(path: str, workspace: Path) -> QImage:
    data = image_bytes(Path(path), workspace)
    image = QImage.fromData(data) if data is not None else QImage()
    if image.isNull() or (image.width() <= SIZE.width() and image.height() <= SIZE.height()):
        return image
    return image.scaled(SIZE, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)

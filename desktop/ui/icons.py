"""The tray icon in its three states, usable by XEmbed trays (pixmaps) and StatusNotifierItem hosts (theme names).

SNI hosts draw icons themselves and only understand theme names, so the icons are installed into the
user's hicolor theme at start; Qt's own pixmap export would otherwise show as a generic placeholder."""

from __future__ import annotations

import logging
import os
import shutil
from enum import Enum
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from desktop.kernel.paths import bundled

log = logging.getLogger(__name__)


class TrayState(Enum):
    IDLE = "nanobot-tray"
    WORKING = "nanobot-tray-working"
    ATTENTION = "nanobot-tray-attention"


_FALLBACK_COLOURS = {TrayState.IDLE: "#4FB3E8", TrayState.WORKING: "#F2A93B", TrayState.ATTENTION: "#E0452B"}
_cache: dict[TrayState, QIcon] = {}


def icons_dir() -> Path | None:
    try:
        return bundled("resources") / "icons"
    except FileNotFoundError:
        return None


def user_icon_theme_dir() -> Path:
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "icons" / "hicolor"


def install_theme_icons() -> int:
    """Copy the bundled hicolor PNGs into the user's icon theme (only those missing or changed); returns how many."""
    source = icons_dir()
    if source is None or not (source / "hicolor").is_dir():
        return 0
    target_root = user_icon_theme_dir()
    copied = 0
    for png in (source / "hicolor").glob("*/apps/*.png"):
        target = target_root / png.relative_to(source / "hicolor")
        try:
            if target.exists() and target.stat().st_size == png.stat().st_size:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(png, target)
            copied += 1
        except OSError as exc:  # a read-only home must not stop the app; the pixmap icon still works
            log.warning("could not install the tray icon into %s: %s", target_root, exc)
            return copied
    return copied


def tray_icon(state: TrayState) -> QIcon:
    """Themed icon (so SNI hosts get a name) backed by the bundled PNG; a drawn badge if the files are missing."""
    if state not in _cache:
        _cache[state] = QIcon.fromTheme(state.value, _file_icon(state))
    return _cache[state]


def _file_icon(state: TrayState) -> QIcon:
    folder = icons_dir()
    if folder is not None:
        icon = QIcon()
        for png in sorted((folder / "hicolor").glob(f"*/apps/{state.value}.png")):
            icon.addFile(str(png))
        if not icon.isNull():
            return icon
        single = folder / f"{state.value}.png"
        if single.is_file():
            return QIcon(str(single))
    log.warning("bundled icon %s missing; drawing a plain one", state.value)
    return QIcon(_drawn(state))


def _drawn(state: TrayState) -> QPixmap:
    pixmap = QPixmap(64, 64)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(_FALLBACK_COLOURS[state]))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawRoundedRect(4, 4, 56, 56, 14, 14)
    painter.end()
    return pixmap

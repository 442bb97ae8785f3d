"""Render the app icons (resources/icons/*.svg) to the PNGs the tray and the desktop entry use.

Run after editing an SVG: `python packaging/render_icons.py` (needs PySide6 with QtSvg, which
pyside6-essentials ships). The PNGs are committed, so neither the app nor a build renders SVG.
Writes resources/icons/<name>.png at 64 px and resources/icons/hicolor/<size>x<size>/apps/<name>.png.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402  (the platform must be chosen before Qt loads)
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
TRAY_SIZE = 64


def render(svg: Path, size: int, out: Path) -> None:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out)):
        raise SystemExit(f"could not write {out}")


def main() -> None:
    app = QGuiApplication([])  # noqa: F841  (QPainter needs a GUI application)
    svgs = sorted(ICONS.glob("nanobot-tray*.svg"))
    if not svgs:
        raise SystemExit(f"no nanobot-tray*.svg in {ICONS}")
    for svg in svgs:
        render(svg, TRAY_SIZE, ICONS / f"{svg.stem}.png")
        for size in SIZES:
            render(svg, size, ICONS / "hicolor" / f"{size}x{size}" / "apps" / f"{svg.stem}.png")
        print(f"rendered {svg.name}: {TRAY_SIZE} px and hicolor {', '.join(map(str, SIZES))}")


if __name__ == "__main__":
    main()

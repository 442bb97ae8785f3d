"""Render the app icons (resources/icons/*.svg) to the PNGs the tray and the desktop entry use.

Run after editing an SVG: `python packaging/render_icons.py` (needs PySide6 with QtSvg, which
pyside6-essentials ships). The PNGs are committed, so neither the app nor a build renders SVG.
Writes resources/icons/<name>.png at 64 px and resources/icons/hicolor/<size>x<size>/apps/<name>.png, and
the program icons the PyInstaller spec uses on Windows and macOS: packaging/icons/nanobot-tray.ico and
.icns. Both formats hold PNG images as they are, so they are packed here without Pillow or iconutil.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402  (the platform must be chosen before Qt loads)
from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: E402
from PySide6.QtSvg import QSvgRenderer  # noqa: E402

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)
TRAY_SIZE = 64
PROGRAM_ICONS = Path(__file__).resolve().parent / "icons"
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# macOS icon types whose data is a PNG, and its pixel size (the @2x types are the larger image of a pair).
ICNS_TYPES = ((b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
              (b"ic11", 32), (b"ic12", 64), (b"ic13", 256), (b"ic14", 512))


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


def png_bytes(svg: Path, size: int, scratch: Path) -> bytes:
    out = scratch / f"{svg.stem}-{size}.png"
    render(svg, size, out)
    return out.read_bytes()


def write_ico(images: dict[int, bytes], out: Path) -> None:
    """A Windows .ico: a directory of entries, each pointing at a PNG (a width of 0 means 256)."""
    offset = 6 + 16 * len(images)
    directory, data = b"", b""
    for size, png in sorted(images.items()):
        side = 0 if size >= 256 else size
        directory += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(png), offset + len(data))
        data += png
    out.write_bytes(struct.pack("<HHH", 0, 1, len(images)) + directory + data)


def write_icns(images: dict[int, bytes], out: Path) -> None:
    """A macOS .icns: big-endian chunks of (type, length with header, PNG)."""
    chunks = b"".join(kind + struct.pack(">I", 8 + len(images[size])) + images[size] for kind, size in ICNS_TYPES)
    out.write_bytes(b"icns" + struct.pack(">I", 8 + len(chunks)) + chunks)


def program_icons(svg: Path) -> None:
    scratch = PROGRAM_ICONS / ".render"
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        images = {size: png_bytes(svg, size, scratch) for size in {*ICO_SIZES, *(s for _, s in ICNS_TYPES)}}
    finally:
        for leftover in scratch.glob("*.png"):
            leftover.unlink()
        scratch.rmdir()
    write_ico({size: images[size] for size in ICO_SIZES}, PROGRAM_ICONS / f"{svg.stem}.ico")
    write_icns(images, PROGRAM_ICONS / f"{svg.stem}.icns")


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
    program_icons(ICONS / "nanobot-tray.svg")
    print(f"packed {PROGRAM_ICONS / 'nanobot-tray.ico'} and .icns")


if __name__ == "__main__":
    main()

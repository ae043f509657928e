"""Render Quarry's icons from the one SVG source: hicolor PNGs for Linux, quarry.ico and quarry.icns.

Run after editing resources/icons/hicolor/scalable/apps/quarry.svg, then commit what it wrote:
    QT_QPA_PLATFORM=offscreen python installer/make_icons.py
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "hicolor" / "scalable" / "apps" / "quarry.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)  # the hicolor sizes desktops ask for most
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)  # 256 is the largest an .ico entry can declare
# .icns entry types holding PNG data, by pixel size; the @2x types let Retina screens pick sharper images.
ICNS_TYPES = ((b"icp4", 16), (b"icp5", 32), (b"icp6", 64), (b"ic07", 128), (b"ic08", 256), (b"ic09", 512),
              (b"ic10", 1024), (b"ic11", 32), (b"ic12", 64), (b"ic13", 256), (b"ic14", 512))  # fmt: skip


def render_png(renderer: QSvgRenderer, size: int) -> bytes:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError(f"Qt could not encode a {size}px PNG")
    return bytes(data)


def ico(pngs: dict[int, bytes]) -> bytes:
    """A Windows icon whose entries are PNG-compressed (read by Windows Vista and later)."""
    sizes = [s for s in ICO_SIZES if s in pngs]
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset = len(header) + 16 * len(sizes)
    entries, blobs = b"", b""
    for size in sizes:
        png = pngs[size]
        # A dimension of 0 means 256: the field is one byte.
        entries += struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(png), offset)
        offset += len(png)
        blobs += png
    return header + entries + blobs


def icns(pngs: dict[int, bytes]) -> bytes:
    """A macOS icon family whose entries are PNG data (macOS 10.7 and later)."""
    body = b"".join(kind + struct.pack(">I", 8 + len(pngs[size])) + pngs[size] for kind, size in ICNS_TYPES)
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        print(f"make_icons: Qt cannot read {SOURCE}", file=sys.stderr)
        return 1
    pngs = {size: render_png(renderer, size) for size in {*PNG_SIZES, *ICO_SIZES, *(s for _, s in ICNS_TYPES)}}
    written = []
    for size in PNG_SIZES:
        path = ICONS / "hicolor" / f"{size}x{size}" / "apps" / "quarry.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pngs[size])
        written.append(path)
    (ICONS / "quarry.ico").write_bytes(ico(pngs))
    (ICONS / "quarry.icns").write_bytes(icns(pngs))
    for path in (*written, ICONS / "quarry.ico", ICONS / "quarry.icns"):
        print(path.relative_to(ICONS.parent.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())

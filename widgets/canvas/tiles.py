"""A graph too big for one readable PNG, written as a grid of readable PNG tiles.

One PNG side stops at ``HARD_MAX_SIDE`` pixels (Qt's raster painter) and at the memory
free for it; a graph taller than that at a readable scale would have to be shrunk until
its text is dots. ``render --tiles`` instead cuts the picture into tiles of at most
``tile_px`` pixels a side, each drawn at the readable scale, named ``<stem>-r<row>c<col>.png``
beside the requested file, row 1 at the top. Tiles overlap by nothing and together cover
exactly the picture one PNG would have shown, so they can be stitched back.
"""

from __future__ import annotations

import math
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter

from widgets.canvas.export import _clean_render, export_rect

__all__ = ["export_png_tiles", "tile_paths", "TILE_PX"]

#: the longest side of one tile, in pixels
TILE_PX = 8192


def tile_paths(path: str | Path, rows: int, cols: int) -> list[Path]:
    """The tile files of a ``rows`` x ``cols`` grid for the picture ``path``, row by row."""
    p = Path(path)
    return [p.with_name(f"{p.stem}-r{r}c{c}{p.suffix}") for r in range(1, rows + 1) for c in range(1, cols + 1)]


def export_png_tiles(scene, path: str | Path, *, scale: float, tile_px: int = TILE_PX,
                     selection_only: bool = False) -> tuple[int, int, list[Path], QSize]:
    """Write the graph (or the selection's region) at ``scale`` as tiles; returns (rows,
    cols, files, the size of the whole picture in pixels). Raises OSError when a tile
    cannot be written."""
    rect = export_rect(scene, selection_only=selection_only)
    width, height = rect.width() * scale, rect.height() * scale
    cols = max(1, math.ceil(width / tile_px))
    rows = max(1, math.ceil(height / tile_px))
    files = tile_paths(path, rows, cols)
    step = tile_px / scale  # scene units a full tile covers
    with _clean_render(scene, scale):
        for k, out in enumerate(files):
            r, c = divmod(k, cols)
            sub = QRectF(rect.x() + c * step, rect.y() + r * step,
                         min(step, rect.right() - (rect.x() + c * step)),
                         min(step, rect.bottom() - (rect.y() + r * step)))
            w, h = max(1, int(round(sub.width() * scale))), max(1, int(round(sub.height() * scale)))
            image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
            image.fill(scene.palette_.background)
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            scene.render(painter, QRectF(0, 0, w, h), sub, Qt.AspectRatioMode.IgnoreAspectRatio)
            painter.end()
            if not image.save(str(out), "PNG", 50):
                raise OSError(f"cannot write PNG {str(out)!r}")
    return rows, cols, files, QSize(int(round(width)), int(round(height)))

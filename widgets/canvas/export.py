"""Export a ``GraphScene`` (whole graph or the region of the selection) as PNG or SVG.

PNG: ``QImage`` + ``QPainter`` + ``QGraphicsScene.render``; the scale is capped so that a
50k-node graph gives a sane image (``max_side`` pixels on the long side) instead of a
gigapixel one; the level of detail then follows from the scale exactly as in the view.
SVG: written directly from the scene's items (``widgets.canvas.svg``), every label a real
``<text>``; 20x faster and far smaller than QSvgGenerator on big graphs.

Exports are "clean": hover and selection highlights are switched off while rendering and
restored afterwards, so an export looks the same whatever the user last clicked.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter

from widgets.canvas.scene import GraphScene

# NOTE: PNG encoding costs ~70 ms per megapixel here (zlib, whatever the level), so the
# default caps keep a whole 10k-node graph at a few seconds; --max-size raises them.
MAX_SIDE = 8192
MAX_PIXELS = 32_000_000
EXPORT_MARGIN = 24.0
# NOTE: a tall graph squeezed under MAX_SIDE loses every label (a 17,000-unit ResNet-50 at
# 0.47 px per unit). ``readable_scale`` lets such a picture grow past the default caps,
# up to HARD_MAX_SIDE pixels a side (Qt's raster painter works in 16-bit-safe device
# coordinates below 32767) and to the pixels the free memory can hold, so that text stays
# at READABLE_SCALE at least; beyond that it is scaled down, and the caller says so.
READABLE_SCALE = 0.75
HARD_MAX_SIDE = 32000
HARD_MAX_PIXELS = 400_000_000
# NOTE: a readable PNG of an 11.8k-node graph is ~400 million pixels and took 49-59 s to
# draw (issue 30). Beyond QUICK_PNG_PIXELS (a few seconds of drawing) ``render`` draws the
# picture within the default caps instead and says how to get it readable (tiles, SVG,
# or --max-size to draw the big one anyway).
QUICK_PNG_PIXELS = 64_000_000
#: the size of that quick picture (zlib's encoding of a PNG costs ~40 ms per million pixels)
QUICK_OVERVIEW_PIXELS = 8_000_000


def png_pixels(rect: QRectF, scale: float) -> float:
    """Pixels of a PNG of ``rect`` at ``scale``."""
    return rect.width() * scale * rect.height() * scale


def headless_application():
    """The running QApplication, or a new one for drawing; on Linux without a display it
    uses the offscreen platform (``onnx-studio render`` on a server or in CI)."""
    import os
    import sys

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        if sys.platform.startswith("linux") and not any(
            os.environ.get(v) for v in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")
        ):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QApplication(["onnx-studio-render"])
    return app


def export_rect(scene: GraphScene, *, selection_only: bool = False) -> QRectF:
    """Scene rectangle an export covers: the graph, or the selected boxes' region."""
    if selection_only:
        keys = scene.selected_keys()
        if not keys:
            raise ValueError("nothing selected to export")
        rect = scene.keys_rect(keys)
    else:
        rect = scene.graph_rect()
    return rect.adjusted(-EXPORT_MARGIN, -EXPORT_MARGIN, EXPORT_MARGIN, EXPORT_MARGIN)


def fit_scale(rect: QRectF, scale: float, *, max_side: int = MAX_SIDE, max_pixels: int = MAX_PIXELS) -> float:
    """``scale`` reduced so that the image of ``rect`` stays within the pixel limits."""
    if rect.isEmpty():
        return scale
    s = min(scale, max_side / rect.width(), max_side / rect.height())
    area = rect.width() * rect.height() * s * s
    if area > max_pixels:
        s *= (max_pixels / area) ** 0.5
    return s


def _free_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


def readable_scale(rect: QRectF, scale: float, *, max_side: int = MAX_SIDE,
                   max_pixels: int = MAX_PIXELS) -> tuple[float, bool]:
    """The scale for a PNG of ``rect``: ``scale`` within the default caps when text stays
    readable there, else grown past them toward ``READABLE_SCALE`` (see the NOTE above).

    Returns (scale, readable): ``readable`` is False when even the raised caps leave the
    text below ``READABLE_SCALE`` (the picture is an overview then)."""
    s = fit_scale(rect, scale, max_side=max_side, max_pixels=max_pixels)
    want = min(scale, READABLE_SCALE)
    if s >= want or rect.isEmpty():
        return s, True
    # 4 bytes a pixel for the image, and about as much again while it is encoded
    mem = _free_memory()
    pix_cap = HARD_MAX_PIXELS if mem is None else max(max_pixels, min(HARD_MAX_PIXELS, mem // 16))
    raised = fit_scale(rect, want, max_side=max(max_side, HARD_MAX_SIDE), max_pixels=pix_cap)
    return max(s, raised), raised >= want


@contextmanager
def _clean_render(scene: GraphScene, scale: float):
    """Switch off hover/selection marks and pick the level of detail for ``scale``."""
    selected = scene.selected_keys()
    hovered = scene.hovered()
    mode = scene.mode
    scene.blockSignals(True)
    try:
        scene.set_hovered(None)
        scene.select_keys([])
        scene.set_detail(scale)
        yield
    finally:
        scene.set_mode(mode)
        scene.select_keys(selected)
        scene.set_hovered(hovered)
        scene.blockSignals(False)


def render_image(
    scene: GraphScene,
    *,
    selection_only: bool = False,
    scale: float = 2.0,
    max_side: int = MAX_SIDE,
    max_pixels: int = MAX_PIXELS,
    transparent: bool = False,
) -> QImage:
    """Render the graph (or the selection's region) to an ARGB image."""
    rect = export_rect(scene, selection_only=selection_only)
    s = fit_scale(rect, scale, max_side=max_side, max_pixels=max_pixels)
    width = max(1, int(round(rect.width() * s)))
    height = max(1, int(round(rect.height() * s)))
    image = QImage(width, height, QImage.Format.Format_ARGB32_Premultiplied)
    if transparent:
        image.fill(Qt.GlobalColor.transparent)
    else:
        image.fill(scene.palette_.background)
    with _clean_render(scene, s):
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        scene.render(painter, QRectF(0, 0, width, height), rect, Qt.AspectRatioMode.IgnoreAspectRatio)
        painter.end()
    return image


def export_png(scene: GraphScene, path: str | Path, *, selection_only: bool = False, scale: float = 2.0,
               max_side: int = MAX_SIDE, max_pixels: int = MAX_PIXELS) -> QSize:
    """Write a PNG; returns its size in pixels. Raises OSError when it cannot be written."""
    image = render_image(scene, selection_only=selection_only, scale=scale, max_side=max_side, max_pixels=max_pixels)
    # NOTE: quality 50 trades a slightly bigger file for ~2x faster zlib on huge images.
    if not image.save(str(path), "PNG", 50):
        raise OSError(f"cannot write PNG {str(path)!r}")
    return image.size()


def export_svg(scene: GraphScene, path: str | Path, *, selection_only: bool = False, title: str = "") -> QSize:
    """Write an SVG of the graph (or the selection's region) in scene units; returns its size.

    Written element by element (widgets.canvas.svg), not through QSvgGenerator: see there.
    """
    from widgets.canvas.svg import write_svg

    rect = export_rect(scene, selection_only=selection_only)
    write_svg(scene, path, rect, title=title)
    return QSize(max(1, int(rect.width())), max(1, int(rect.height())))


def layout_rect(display, layout) -> QRectF | None:
    """The scene rectangle a whole-graph export of ``layout`` covers (None: no boxes)."""
    pos = layout.positions
    boxes = [b for b in display.boxes if b.key in pos]
    if not boxes:
        return None
    x0 = min(pos[b.key][0] for b in boxes)
    y0 = min(pos[b.key][1] for b in boxes)
    x1 = max(pos[b.key][0] + b.width for b in boxes)
    y1 = max(pos[b.key][1] + b.height for b in boxes)
    # open groups' frames reach above and around their members
    for fx, fy, fw, fh in (getattr(layout, "frames", None) or {}).values():
        x0, y0, x1, y1 = min(x0, fx), min(y0, fy), max(x1, fx + fw), max(y1, fy + fh)
    return QRectF(x0, y0, x1 - x0, y1 - y0).adjusted(-EXPORT_MARGIN, -EXPORT_MARGIN, EXPORT_MARGIN, EXPORT_MARGIN)


def overview_png(display, layout, path: str | Path, *, scale: float = 2.0, dark: bool = False,
                 max_side: int = MAX_SIDE, max_pixels: int = MAX_PIXELS, always: bool = False) -> QSize | None:
    """PNG of a whole graph straight from the display model and layout, without a scene.

    Returns ``None`` (and writes nothing) when the capped scale leaves room for text: then
    the caller should build a scene and use :func:`export_png`. Below ``BATCH_LOD`` a
    scene paints exactly this anyway (boxes as filled rectangles per colour, edges as
    straight polylines), so building 10k items just to draw rectangles would be waste.
    ``always``: draw it so whatever the scale (a quick picture instead of a slow one).
    """
    from PySide6.QtGui import QPainterPath, QPen, QTransform

    from widgets.canvas.palette import dark_palette, light_palette
    from widgets.canvas.style import BATCH_LOD

    pos = layout.positions
    boxes = [b for b in display.boxes if b.key in pos]
    rect = layout_rect(display, layout)
    if rect is None:
        return None
    s = fit_scale(rect, scale, max_side=max_side, max_pixels=max_pixels)
    if s >= BATCH_LOD and not always:
        return None
    palette = dark_palette() if dark else light_palette()
    width = max(1, int(round(rect.width() * s)))
    height = max(1, int(round(rect.height() * s)))
    image = QImage(width, height, QImage.Format.Format_RGB32)
    image.fill(palette.background)
    edges = QPainterPath()
    for route in layout.routes.values():
        if len(route) >= 2:
            edges.moveTo(route[0][0], route[0][1])
            for x, y in route[1:]:
                edges.lineTo(x, y)
    fills: dict[str, QPainterPath] = {}
    for b in boxes:
        p = fills.get(b.category)
        if p is None:
            p = fills[b.category] = QPainterPath()
        x, y = pos[b.key]
        p.addRect(QRectF(x, y, b.width, b.height))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setTransform(QTransform(s, 0, 0, s, -rect.x() * s, -rect.y() * s))
    frames = getattr(layout, "frames", None) or {}
    if frames:
        from widgets.canvas.frames import frame_colours
        from widgets.canvas.style import CanvasStyle

        fill, border, _ = frame_colours(CanvasStyle(palette))
        fpen = QPen(border, 1.0)
        fpen.setCosmetic(True)
        painter.setPen(fpen)
        painter.setBrush(fill)
        for fx, fy, fw, fh in sorted(frames.values(), key=lambda r: -r[2] * r[3]):
            painter.drawRect(QRectF(fx, fy, fw, fh))
    pen = QPen(palette.edge, 1.0)
    pen.setCosmetic(True)
    painter.setPen(pen)
    painter.drawPath(edges)
    painter.setPen(Qt.PenStyle.NoPen)
    for category, p in sorted(fills.items()):
        painter.setBrush(palette.category(category))
        painter.drawPath(p)
    painter.end()
    if not image.save(str(path), "PNG", 50):
        raise OSError(f"cannot write PNG {str(path)!r}")
    return image.size()


def export_graph_svg(display, layout, path: str | Path, *, dark: bool = False, show_names: bool = False,
                     title: str = "", keys=None) -> QSize:
    """SVG of a laid-out display graph without building a scene (the CLI's path); ``keys``
    limits it to the region of those boxes."""
    from widgets.canvas.palette import dark_palette, light_palette
    from widgets.canvas.style import CanvasStyle
    from widgets.canvas.svg import graph_svg

    pos = layout.positions
    boxes = [b for b in display.boxes if b.key in pos and (keys is None or b.key in keys)]
    if not boxes:
        raise ValueError("nothing to export")
    x0 = min(pos[b.key][0] for b in boxes)
    y0 = min(pos[b.key][1] for b in boxes)
    x1 = max(pos[b.key][0] + b.width for b in boxes)
    y1 = max(pos[b.key][1] + b.height for b in boxes)
    if keys is None:
        # open groups' frames reach above and around their members
        for fx, fy, fw, fh in (getattr(layout, "frames", None) or {}).values():
            x0, y0, x1, y1 = min(x0, fx), min(y0, fy), max(x1, fx + fw), max(y1, fy + fh)
    rect = QRectF(x0, y0, x1 - x0, y1 - y0).adjusted(-EXPORT_MARGIN, -EXPORT_MARGIN, EXPORT_MARGIN, EXPORT_MARGIN)
    style = CanvasStyle(dark_palette() if dark else light_palette())
    Path(path).write_text(graph_svg(display, layout, style, rect, title=title, show_names=show_names), encoding="utf-8")
    return QSize(max(1, int(rect.width())), max(1, int(rect.height())))

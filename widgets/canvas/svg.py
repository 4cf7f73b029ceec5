"""Direct SVG writer for a ``GraphScene``: the canvas picture as compact, selectable SVG.

# NOTE: why not QSvgGenerator (which PySide6-Essentials does ship): rendering a 10k-node
# scene through it took 6.3 s and wrote 27 MB (every glyph run with its own transform and
# style attributes); writing the elements ourselves takes a fraction of that, gives one
# ``<text>`` per label with CSS classes, and keeps the file a fraction of the size. Geometry
# and text come from the same items the canvas paints (their cached text layout, edge
# polylines, arrow and stub paths), so the SVG matches the screen.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainterPath

from widgets.canvas.items import EdgeTileItem, NodeItem
from widgets.canvas.style import HEADER_H, RADIUS

_CORNER = 10.0


def _f(v: float) -> str:
    return f"{v:.1f}"


def _hex(c: QColor) -> str:
    return c.name(QColor.NameFormat.HexRgb)


def _path_d(path: QPainterPath) -> str:
    """SVG path data of a QPainterPath (move/line/cubic elements)."""
    out: list[str] = []
    n = path.elementCount()
    i = 0
    while i < n:
        e = path.elementAt(i)
        if e.isMoveTo():
            out.append(f"M{e.x:.1f} {e.y:.1f}")
        elif e.isLineTo():
            out.append(f"L{e.x:.1f} {e.y:.1f}")
        elif e.isCurveTo() and i + 2 < n:
            c2 = path.elementAt(i + 1)
            end = path.elementAt(i + 2)
            out.append(f"C{e.x:.1f} {e.y:.1f} {c2.x:.1f} {c2.y:.1f} {end.x:.1f} {end.y:.1f}")
            i += 2
        i += 1
    return "".join(out)


def _rounded_d(points: list[tuple[float, float]], radius: float = _CORNER) -> str:
    """Polyline with rounded corners, the same geometry as items.rounded_polyline."""
    n = len(points)
    if n < 2:
        return ""
    out = [f"M{points[0][0]:.1f} {points[0][1]:.1f}"]
    for i in range(1, n - 1):
        px, py = points[i - 1]
        cx, cy = points[i]
        nx, ny = points[i + 1]
        d1 = math.hypot(cx - px, cy - py)
        d2 = math.hypot(nx - cx, ny - cy)
        if d1 < 1e-6 or d2 < 1e-6:
            continue
        r = min(radius, d1 / 2.0, d2 / 2.0)
        ax, ay = cx - (cx - px) / d1 * r, cy - (cy - py) / d1 * r
        bx, by = cx + (nx - cx) / d2 * r, cy + (ny - cy) / d2 * r
        out.append(f"L{ax:.1f} {ay:.1f}Q{cx:.1f} {cy:.1f} {bx:.1f} {by:.1f}")
    out.append(f"L{points[-1][0]:.1f} {points[-1][1]:.1f}")
    return "".join(out)


def _css(scene) -> str:
    st = scene.style
    pal = st.palette
    fam = escape(st.body_font.family() or "sans-serif")
    return (
        f"text{{font-family:'{fam}',DejaVu Sans,Helvetica,Arial,sans-serif;white-space:pre}}"
        f".e{{fill:none;stroke:{_hex(pal.edge)};stroke-width:1.2;stroke-linejoin:round}}"
        f".a{{fill:{_hex(pal.edge)}}}"
        f".r{{fill:none;stroke:{_hex(pal.reference)};stroke-width:1.2;stroke-linecap:round}}"
        f".box{{fill:{_hex(pal.box_fill)};stroke:{_hex(pal.box_border)};stroke-width:1}}"
        f".grp{{fill:{_hex(pal.group_fill)};stroke:{_hex(pal.box_border)};stroke-width:1}}"
        f".k0{{font-size:11px;font-weight:bold;fill:{_hex(pal.header_text)}}}"
        f".k1{{font-size:10px;fill:{_hex(pal.box_text)}}}"
        f".k2{{font-size:10px;font-style:italic;fill:{_hex(pal.muted_text)}}}"
        f".k3{{font-size:10px;fill:{_hex(pal.muted_text)}}}"
        f".k4{{font-size:11px;font-weight:bold;fill:{_hex(pal.box_text)}}}"
        f".k5{{font-size:10px;font-style:italic;fill:{_hex(pal.header_text)}}}"
        f".l0{{font-size:9px;fill:{_hex(pal.edge_label)}}}"
        f".l1{{font-size:9px;fill:{_hex(pal.reference)}}}"
    )


def _node_svg(item: NodeItem, scene, out: list[str]) -> None:
    st = scene.style
    box = item.box
    r = item.scene_rect()
    x, y, w, h = r.x(), r.y(), r.width(), r.height()
    colour = _hex(st.category_colour(box.category))
    if box.kind == "group":
        out.append(f'<rect class="grp" x="{x + 4:.1f}" y="{y + 4:.1f}" width="{w - 4:.1f}" height="{h - 4:.1f}" rx="{RADIUS:.1f}"/>')
        out.append(f'<rect class="box" x="{x:.1f}" y="{y:.1f}" width="{w - 4:.1f}" height="{h - 4:.1f}" rx="{RADIUS:.1f}"/>')
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="5" height="{h - 4:.1f}" rx="2" fill="{colour}"/>')
        cx, cy = x + w - 4.0, y
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="6.5" fill="{colour}"/>'
                   f'<path d="M{cx - 3.2:.1f} {cy:.1f}H{cx + 3.2:.1f}M{cx:.1f} {cy - 3.2:.1f}V{cy + 3.2:.1f}" '
                   f'stroke="{_hex(st.palette.header_text)}" stroke-width="1.6"/>')
    elif box.kind in ("input", "output"):
        rr = _f(min(h / 2.0, 12.0))
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rr}" fill="{colour}"/>')
    elif box.details or box.weights:
        hh = min(HEADER_H, h)
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}" fill="{colour}"/>')
        r0 = RADIUS
        out.append(
            f'<path fill="{_hex(st.palette.box_fill)}" d="M{x:.1f} {y + hh:.1f}H{x + w:.1f}V{y + h - r0:.1f}'
            f'Q{x + w:.1f} {y + h:.1f} {x + w - r0:.1f} {y + h:.1f}H{x + r0:.1f}Q{x:.1f} {y + h:.1f} {x:.1f} {y + h - r0:.1f}Z"/>')
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}" fill="none" '
                   f'stroke="{_hex(st.palette.box_border)}"/>')
    else:
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}" fill="{colour}"/>')
    if item._texts is None:
        item._texts = item._layout_text()
    metrics = (st.header_metrics, st.body_metrics, st.name_metrics, st.body_metrics, st.header_metrics, st.name_metrics)
    for kind, static, point in item._texts:
        baseline = y + point.y() + metrics[kind].ascent()
        out.append(f'<text class="k{kind}" x="{x + point.x():.1f}" y="{baseline:.1f}">{escape(static.text())}</text>')


def _tile_svg(tile: EdgeTileItem, scene, rect: QRectF, out: list[str]) -> None:
    if not tile.boundingRect().intersects(rect):
        return
    lines = [d for d in (_rounded_d(pts) for pts in tile._polylines) if d]
    if lines:
        out.append(f'<path class="e" d="{"".join(lines)}"/>')
    if not tile._arrows.isEmpty():
        out.append(f'<path class="a" d="{_path_d(tile._arrows)}"/>')
    if not tile._stubs.isEmpty():
        out.append(f'<path class="r" d="{_path_d(tile._stubs)}"/>')
    lm = scene.style.label_metrics
    bg = _hex(scene.style.palette.background)
    for label in tile._labels:
        if not label.rect.intersects(rect):
            continue
        lr = label.rect
        out.append(f'<rect x="{lr.x():.1f}" y="{lr.y():.1f}" width="{lr.width():.1f}" height="{lr.height():.1f}" '
                   f'fill="{bg}" fill-opacity="0.82"/>')
        out.append(f'<text class="l{label.kind}" x="{label.pos.x():.1f}" y="{label.pos.y() + lm.ascent():.1f}">'
                   f'{escape(label.text)}</text>')


def scene_svg(scene, rect: QRectF, *, title: str = "", keys: Iterable[str] | None = None) -> str:
    """The SVG document of ``scene`` within ``rect`` (only ``keys`` boxes if given)."""
    wanted = set(keys) if keys is not None else None
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{rect.width():.1f}" height="{rect.height():.1f}" '
        f'viewBox="{rect.x():.1f} {rect.y():.1f} {rect.width():.1f} {rect.height():.1f}">',
        f"<title>{escape(title or 'ONNX graph')}</title>",
        f"<desc>Rendered by ONNX Studio</desc><style>{_css(scene)}</style>",
        f'<rect x="{rect.x():.1f}" y="{rect.y():.1f}" width="{rect.width():.1f}" height="{rect.height():.1f}" '
        f'fill="{_hex(scene.palette_.background)}"/>',
        '<g id="edges">',
    ]
    for tile in scene.edge_tiles():
        _tile_svg(tile, scene, rect, out)
    out.append('</g><g id="nodes">')
    for key, item in scene.node_items().items():
        if wanted is not None and key not in wanted:
            continue
        if item.scene_rect().intersects(rect):
            _node_svg(item, scene, out)
    out.append("</g></svg>\n")
    return "\n".join(out)


def write_svg(scene, path: str | Path, rect: QRectF, *, title: str = "", keys: Iterable[str] | None = None) -> None:
    """Write :func:`scene_svg` to ``path`` (UTF-8). Raises OSError when it cannot."""
    Path(path).write_text(scene_svg(scene, rect, title=title, keys=keys), encoding="utf-8")

"""Direct SVG writer for a ``GraphScene``: the canvas picture as compact, selectable SVG.

# NOTE: why not QSvgGenerator (which PySide6-Essentials does ship): rendering a 10k-node
# scene through it took 6.3 s and wrote 27 MB (every glyph run with its own transform and
# style attributes); writing the elements ourselves takes a fraction of that, gives one
# ``<text>`` per label with CSS classes, and keeps the file a fraction of the size. Geometry
# and text come from the same functions the canvas items use (widgets.canvas.geometry for
# edges, items.box_text_layout for text), so the SVG matches the screen; no scene is
# needed, which keeps a headless 12k-node export to the cost of writing the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from xml.sax.saxutils import escape

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from widgets.canvas.frames import frame_specs, frame_svg, repeat_classes
from widgets.canvas.geometry import CORNER, STUB, arrow_points, edge_geometry, rounded_corners
from widgets.canvas.items import box_text_layout
from widgets.canvas.style import HEADER_H, RADIUS, CanvasStyle



def _f(v: float) -> str:
    return f"{v:.1f}"


def _hex(c: QColor) -> str:
    return c.name(QColor.NameFormat.HexRgb)


def _rounded_d(points: list[tuple[float, float]], radius: float = CORNER) -> str:
    """Polyline with rounded corners, the same geometry as edge_items.rounded_polyline."""
    if len(points) < 2:
        return ""
    out = [f"M{points[0][0]:.1f} {points[0][1]:.1f}"]
    for (ax, ay), (cx, cy), (bx, by) in rounded_corners(points, radius):
        out.append(f"L{ax:.1f} {ay:.1f}Q{cx:.1f} {cy:.1f} {bx:.1f} {by:.1f}")
    out.append(f"L{points[-1][0]:.1f} {points[-1][1]:.1f}")
    return "".join(out)


def _css(st: CanvasStyle) -> str:
    pal = st.palette
    fam = escape(st.body_font.family() or "sans-serif")
    return (
        f"text{{font-family:'{fam}',DejaVu Sans,Helvetica,Arial,sans-serif;white-space:pre}}"
        f".e{{fill:none;stroke:{_hex(pal.edge)};stroke-width:1.5;stroke-linejoin:round}}"
        f".a{{fill:{_hex(pal.edge)}}}"
        f".d{{stroke-width:1;stroke-dasharray:5 3}}"
        f".r{{fill:none;stroke:{_hex(pal.reference)};stroke-width:1.2;stroke-linecap:round}}"
        f".box{{fill:{_hex(pal.box_fill)};stroke:{_hex(pal.box_border)};stroke-width:1}}"
        f".grp{{fill:{_hex(pal.group_fill)};stroke:{_hex(pal.box_border)};stroke-width:1}}"
        f".body{{fill:{_hex(pal.box_fill)}}}"
        f".outline{{fill:none;stroke:{_hex(pal.box_border)};stroke-width:1}}"
        f".k0{{font-size:11px;font-weight:bold;fill:{_hex(pal.header_text)}}}"
        f".k1{{font-size:10px;fill:{_hex(pal.box_text)}}}"
        f".k2{{font-size:10px;font-style:italic;fill:{_hex(pal.muted_text)}}}"
        f".k3{{font-size:10px;fill:{_hex(pal.muted_text)}}}"
        f".k4{{font-size:11px;font-weight:bold;fill:{_hex(pal.box_text)}}}"
        f".k5{{font-size:10px;font-style:italic;fill:{_hex(pal.header_text)}}}"
        f".l0{{font-size:9px;fill:{_hex(pal.edge_label)}}}"
        f".l1{{font-size:9px;fill:{_hex(pal.reference)}}}"
    )


def _node_svg(box, pos: tuple[float, float], style: CanvasStyle, show_names: bool, out: list[str],
              repeat: int = 0) -> None:
    st = style
    x, y = float(pos[0]), float(pos[1])
    w, h = float(box.width), float(box.height)
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
        rr = min(h / 2.0, 12.0)
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rr:.1f}" fill="{colour}"/>')
    elif box.details or box.weights:
        hh = min(HEADER_H, h)
        r0 = RADIUS
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}" fill="{colour}"/>')
        out.append(
            f'<path class="body" d="M{x:.1f} {y + hh:.1f}H{x + w:.1f}V{y + h - r0:.1f}'
            f'Q{x + w:.1f} {y + h:.1f} {x + w - r0:.1f} {y + h:.1f}H{x + r0:.1f}Q{x:.1f} {y + h:.1f} {x:.1f} {y + h - r0:.1f}Z"/>')
        out.append(f'<rect class="outline" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}"/>')
    else:
        out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{RADIUS:.1f}" fill="{colour}"/>')
    ascent = _ASCENTS(st)
    for kind, text, tx, ty in box_text_layout(box, st, show_names, repeat=repeat):
        out.append(f'<text class="k{kind}" x="{x + tx:.1f}" y="{y + ty + ascent[kind]:.1f}">{escape(text)}</text>')


def _ASCENTS(st: CanvasStyle) -> tuple[float, ...]:  # noqa: N802 - a cached table
    table = getattr(st, "_svg_ascents", None)
    if table is None:
        table = (st.header_metrics.ascent(), st.body_metrics.ascent(), st.name_metrics.ascent(),
                 st.body_metrics.ascent(), st.header_metrics.ascent(), st.name_metrics.ascent())
        st._svg_ascents = table  # type: ignore[attr-defined]
    return table


def _inside(rect: QRectF, x0: float, y0: float, x1: float, y1: float) -> bool:
    return x1 >= rect.left() and x0 <= rect.right() and y1 >= rect.top() and y0 <= rect.bottom()


def graph_svg(display, layout, style: CanvasStyle, rect: QRectF, *, title: str = "", show_names: bool = False) -> str:
    """The SVG document of a laid-out display graph within ``rect`` (scene units)."""
    positions = layout.positions
    present = {b.key for b in display.boxes if b.key in positions}
    lm = style.label_metrics
    geo = edge_geometry(display, layout, present, lambda t: style.advance(lm, t), lm.height())
    pal = style.palette
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{rect.width():.1f}" height="{rect.height():.1f}" '
        f'viewBox="{rect.x():.1f} {rect.y():.1f} {rect.width():.1f} {rect.height():.1f}">',
        f"<title>{escape(title or 'ONNX graph')}</title>",
        f"<desc>Rendered by ONNX Studio</desc><style>{_css(style)}</style>",
        f'<rect x="{rect.x():.1f}" y="{rect.y():.1f}" width="{rect.width():.1f}" height="{rect.height():.1f}" '
        f'fill="{_hex(pal.background)}"/>',
    ]
    frame_svg(frame_specs(display, layout), style, rect, out)
    out.append('<g id="edges">')
    lines = []
    dashed = []
    for edge, route, pts in geo.routed:
        xs = [p[0] for p in route]
        ys = [p[1] for p in route]
        if _inside(rect, min(xs), min(ys), max(xs), max(ys)):
            (dashed if edge.kind == "body" else lines).append(_rounded_d(pts))
    if lines:
        out.append(f'<path class="e" d="{"".join(lines)}"/>')
    if dashed:
        out.append(f'<path class="e d" d="{"".join(dashed)}"/>')
    heads = []
    for tip, before in geo.heads:
        if _inside(rect, tip[0] - 8, tip[1] - 8, tip[0] + 8, tip[1] + 8):
            a, b, c = arrow_points(tip, before)
            heads.append(f"M{a[0]:.1f} {a[1]:.1f}L{b[0]:.1f} {b[1]:.1f}L{c[0]:.1f} {c[1]:.1f}Z")
    if heads:
        out.append(f'<path class="a" d="{"".join(heads)}"/>')
    stubs = [f"M{sx:.1f} {sy:.1f}v{STUB:.1f}M{sx - 2:.1f} {sy + STUB + 2:.1f}a2 2 0 1 0 4 0a2 2 0 1 0 -4 0"
             for sx, sy in geo.src_stubs
             if _inside(rect, sx, sy, sx, sy + STUB)]
    stubs += [f"M{dx:.1f} {dy - STUB:.1f}V{dy - 6.0:.1f}" for dx, dy in geo.dst_stubs
              if _inside(rect, dx, dy - STUB, dx, dy)]
    if stubs:
        out.append(f'<path class="r" d="{"".join(stubs)}"/>')
    bg = _hex(pal.background)
    ascent = lm.ascent()
    for lb in geo.labels:
        if not _inside(rect, lb.x, lb.y, lb.x + lb.w, lb.y + lb.h):
            continue
        out.append(f'<rect x="{lb.x:.1f}" y="{lb.y:.1f}" width="{lb.w:.1f}" height="{lb.h:.1f}" fill="{bg}" fill-opacity="0.82"/>'
                   f'<text class="l{lb.kind}" x="{lb.x:.1f}" y="{lb.y + ascent:.1f}">{escape(lb.text)}</text>')
    out.append('</g><g id="nodes">')
    repeats = repeat_classes(display)
    for box in display.boxes:
        pos = positions.get(box.key)
        if pos is None or not _inside(rect, pos[0], pos[1], pos[0] + box.width, pos[1] + box.height):
            continue
        _node_svg(box, pos, style, show_names, out,
                  repeat=len(repeats.get(box.key[2:], ())) if box.kind == "group" else 0)
    out.append("</g></svg>\n")
    return "\n".join(out)


def scene_svg(scene, rect: QRectF, *, title: str = "") -> str:
    """The SVG of what ``scene`` shows, within ``rect``."""
    return graph_svg(scene.graph, scene.layout_result, scene.style, rect, title=title, show_names=scene.show_names())


def write_svg(scene, path: str | Path, rect: QRectF, *, title: str = "") -> None:
    """Write :func:`scene_svg` to ``path`` (UTF-8). Raises OSError when it cannot."""
    Path(path).write_text(scene_svg(scene, rect, title=title), encoding="utf-8")

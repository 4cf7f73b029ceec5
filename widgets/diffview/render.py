"""``onnx-studio diff A B --render OUT.svg|OUT.png|OUT.html``: the diff view's picture, headless.

``.html``: one interactive page with both models as two panes, coloured by the same
statuses, each node linked to its counterpart (:mod:`editor.webpage.diff`; no Qt).

Both sides are drawn as the window draws them (display model -> layout -> canvas
drawing), each with its own layout, A on the left and B on the right, coloured by the
same :class:`editor.diff.display.DiffDisplay` the window uses, with a legend. Each change
(a stop of the diff view) gets a number on both sides and, for the first
:data:`MAX_LINKS`, a line from its box in A to its box in B, so the picture can go into a
bug report or a code review. Groups holding a change are opened (the layout and the box
colours come from :func:`editor.diff.picture.side_picture`, Qt-free), so the changes are
boxes of their own.

SVG: each side is the canvas's own SVG (``widgets.canvas.svg``) nested at its place, its
colour cells in a ``<g class="diff">`` of ``<rect data-key data-status>``; the links are
``<path class="link" data-stop>``, the numbers ``<text class="badge">``; every element a
test or a script may look for has an id or a class. PNG: two scenes rendered side by side
onto one image, with the same cells, numbers and lines.

The command's other options and its output (summary or ``--json``, exit codes) are
those of :mod:`editor.cli.diff`; this module adds ``--render`` where Qt is at hand.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from editor.diff.display import COLOURS, COLOURS_DARK, LEGEND, SAME, DiffDisplay
from editor.errors import StudioError

__all__ = ["add_parser", "render_diff", "run"]

MAX_LINKS = 60
GAP = 90.0  # between the two sides (layout units)
HEADER = 64.0  # titles and legend above the sides


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from editor.cli import diff as core

    p = core.add_parser(subparsers)
    p.add_argument("--render", metavar="OUT", default=None,
                   help="also draw both models side by side, coloured by the diff with a legend and the "
                        "changes numbered and linked, to OUT.svg or OUT.png; or an interactive page of "
                        "both sides to OUT.html")
    p.add_argument("--dark", action="store_true", help="with --render: dark theme")
    return p


def run(args: argparse.Namespace) -> int:
    from editor.cli import diff as core

    if not args.render:
        return core.run(args)
    out = Path(args.render)
    if out.suffix.lower() not in (".svg", ".png", ".html"):
        raise StudioError(f"--render writes .svg, .png or .html, not {out.suffix or 'a file without suffix'!r}")
    from editor.diff.side_by_side import Side, side_by_side

    core.check_tolerances(args)
    result = side_by_side(Side(Path(args.a), name=Path(args.a).name), Side(Path(args.b), name=Path(args.b).name),
                          rtol=args.rtol, atol=args.atol)
    try:
        if out.suffix.lower() == ".html":
            from editor.webpage.diff import diff_page

            page = diff_page(result, names=(Path(args.a).name, Path(args.b).name), dark=args.dark)
            size = page.write(out)
            print(f"wrote {out} ({size / 1e6:.2f} MB, both sides, {len(result.display.stops)} changes)",
                  file=sys.stderr)
            return core.report(result.diff, args)
        size = render_diff(result, out, names=(Path(args.a).name, Path(args.b).name), dark=args.dark)
        print(f"wrote {out} ({size[0]}x{size[1]}, {len(result.display.stops)} changes numbered)", file=sys.stderr)
        return core.report(result.diff, args)
    finally:
        result.close()


# -- one side ----------------------------------------------------------------------------------
@dataclass
class _Side:
    """A side's picture (:class:`editor.diff.picture.SidePicture`) and where it goes."""

    display: Any  # editor.viewmodel DisplayGraph
    layout: Any  # editor.layout LayoutResult
    statuses: dict[str, str]  # box key -> status
    node_box: dict[int, str]  # node id -> the key of the box that shows it
    rect: Any = None  # QRectF of the drawing (scene units)
    offset: tuple[float, float] = (0.0, 0.0)  # where the side's rect starts in the picture


def _side(doc, display: DiffDisplay, side: str) -> _Side:  # noqa: ANN001
    from editor.diff.picture import side_picture

    p = side_picture(doc, display, side)
    return _Side(p.display, p.layout, p.statuses, p.node_box)


def _rect(side: _Side):  # noqa: ANN202
    from PySide6.QtCore import QRectF

    from widgets.canvas.export import EXPORT_MARGIN

    pos = side.layout.positions
    boxes = [b for b in side.display.boxes if b.key in pos]
    if not boxes:
        return QRectF(0, 0, 200, 100)
    x0 = min(pos[b.key][0] for b in boxes)
    y0 = min(pos[b.key][1] for b in boxes)
    x1 = max(pos[b.key][0] + b.width for b in boxes)
    y1 = max(pos[b.key][1] + b.height for b in boxes)
    for fx, fy, fw, fh in (getattr(side.layout, "frames", None) or {}).values():
        x0, y0, x1, y1 = min(x0, fx), min(y0, fy), max(x1, fx + fw), max(y1, fy + fh)
    return QRectF(x0, y0, x1 - x0, y1 - y0).adjusted(-EXPORT_MARGIN, -EXPORT_MARGIN, EXPORT_MARGIN, EXPORT_MARGIN)


def _box_rect(side: _Side, key: str) -> tuple[float, float, float, float] | None:
    pos = side.layout.positions.get(key)
    box = next((b for b in side.display.boxes if b.key == key), None) if pos is not None else None
    if box is None:
        return None
    return pos[0], pos[1], box.width, box.height


def _links(display: DiffDisplay, a: _Side, b: _Side) -> list[tuple[int, str, str | None, str | None]]:
    """(stop number, kind, A box key, B box key) of every stop with a box on either side."""
    out = []
    for k, stop in enumerate(display.stops, 1):
        ka = next((a.node_box[n] for n in stop.a if n in a.node_box), None)
        if ka is None and stop.io_a:
            ka = next((f"{p}:{n}" for n in stop.io_a for p in ("in", "out") if _box_rect(a, f"{p}:{n}")), None)
        kb = next((b.node_box[n] for n in stop.b if n in b.node_box), None)
        if kb is None and stop.io_b:
            kb = next((f"{p}:{n}" for n in stop.io_b for p in ("in", "out") if _box_rect(b, f"{p}:{n}")), None)
        if ka is not None or kb is not None:
            out.append((k, stop.kind, ka, kb))
    return out


# -- the picture -------------------------------------------------------------------------------
def render_diff(result, out: str | Path, *, names: tuple[str, str], dark: bool = False) -> tuple[int, int]:  # noqa: ANN001
    """Draw ``result`` (:class:`editor.diff.side_by_side.SideBySide`) to ``out`` (.svg or
    .png); returns the picture's size in pixels."""
    from widgets.canvas.export import headless_application

    headless_application()
    display = result.display
    a = _side(result.doc_a, display, "a")
    b = _side(result.doc_b, display, "b")
    out = Path(out)
    svg = out.suffix.lower() == ".svg"
    scenes = None if svg else (_scene(a, dark), _scene(b, dark))
    if scenes is None:
        a.rect, b.rect = _rect(a), _rect(b)
    else:  # the PNG draws each scene's own export rectangle: place the sides by those
        from widgets.canvas.export import export_rect

        a.rect, b.rect = export_rect(scenes[0]), export_rect(scenes[1])
    a.offset = (0.0, HEADER)
    b.offset = (a.rect.width() + GAP, HEADER)
    width = a.rect.width() + GAP + b.rect.width()
    height = HEADER + max(a.rect.height(), b.rect.height())
    links = _links(display, a, b)
    if svg:
        out.write_text(_svg(display, a, b, links, names, width, height, dark), encoding="utf-8")
        return int(width), int(height)
    return _png(display, (a, b), scenes, links, names, width, height, dark, out)


def _scene(side: _Side, dark: bool):  # noqa: ANN202
    """A canvas scene of one side with its diff colours (the Diff dock's overlay item)."""
    from widgets.canvas.scene import GraphScene
    from widgets.compare.overlay import DiffOverlay

    scene = GraphScene(dark=dark)
    scene.set_graph(side.display, side.layout)
    overlay = DiffOverlay()
    scene.addItem(overlay)
    overlay.set_cells(scene, side.statuses, dark=dark)
    return scene


def _colours(dark: bool) -> dict[str, str]:
    return COLOURS_DARK if dark else COLOURS


def _legend_items(display: DiffDisplay) -> list[tuple[str, str, str]]:
    """(status, label, counts) for the legend."""
    c = display.counts()
    out = []
    for e in LEGEND:
        a, b = c[f"a_{e.status}"], c[f"b_{e.status}"]
        counts = f"{a}" if e.status == "removed" else f"{b}" if e.status == "added" else f"{a} / {b}"
        out.append((e.status, e.label, counts))
    return out


def _svg(display: DiffDisplay, a: _Side, b: _Side, links, names: tuple[str, str], width: float,  # noqa: ANN001
         height: float, dark: bool) -> str:
    from widgets.canvas.palette import dark_palette, light_palette
    from widgets.canvas.style import CanvasStyle
    from widgets.canvas.svg import graph_svg

    style = CanvasStyle(dark_palette() if dark else light_palette())
    bg = style.palette.background.name()
    fg = "#e6e6e6" if dark else "#1f2328"
    colours = _colours(dark)
    veil = "#1e1f22" if dark else "#ffffff"
    css = "".join(f".dst-{s}{{fill:{c};fill-opacity:.26;stroke:{c};stroke-width:4}}"
                  f".lk-{s}{{stroke:{c}}}.bg-{s}{{fill:{c}}}" for s, c in colours.items() if s != SAME)
    css += (f".dst-same{{fill:{veil};fill-opacity:.55;stroke:none}}"
            f".link{{fill:none;stroke-width:2;stroke-dasharray:6 4;stroke-opacity:.75}}"
            f".badge{{font:bold 11px sans-serif;fill:#fff}}.head{{font:bold 16px sans-serif;fill:{fg}}}"
            f".leg{{font:12px sans-serif;fill:{fg}}}")
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
             f'viewBox="0 0 {width:.1f} {height:.1f}">',
             f"<title>{escape(names[0])} vs {escape(names[1])}</title>",
             f"<desc>ONNX Studio diff: {escape(' · '.join(display.summary[:1]))}</desc>",
             f"<style>{css}</style>",
             f'<rect x="0" y="0" width="{width:.1f}" height="{height:.1f}" fill="{bg}"/>',
             f'<text class="head" id="title-a" x="8" y="22">A  {escape(names[0])}</text>',
             f'<text class="head" id="title-b" x="{b.offset[0] + 8:.1f}" y="22">B  {escape(names[1])}</text>',
             '<g id="legend">']
    x = 8.0
    for status, label, counts in _legend_items(display):
        parts.append(f'<rect class="bg-{status}" x="{x:.1f}" y="36" width="12" height="12" rx="2" '
                     f'fill="{colours[status]}" data-status="{status}"/>'
                     f'<text class="leg" x="{x + 16:.1f}" y="47">{escape(label)} {escape(counts)}</text>')
        x += 16 + 7.2 * (len(label) + len(counts) + 1) + 18
    parts.append("</g>")
    for side, tag in ((a, "a"), (b, "b")):
        nested = graph_svg(side.display, side.layout, style, side.rect)
        nested = nested.split("\n", 1)[1]  # no XML declaration inside
        nested = nested.replace('<svg xmlns="http://www.w3.org/2000/svg" ',
                                f'<svg id="side-{tag}" x="{side.offset[0]:.1f}" y="{side.offset[1]:.1f}" ', 1)
        cells = [f'<g class="diff" id="diff-{tag}">']
        for key, st in sorted(side.statuses.items(), key=lambda kv: kv[1] != SAME):
            r = _box_rect(side, key)
            if r is None:
                continue
            grow = 0.0 if st == SAME else 3.0
            cells.append(f'<rect class="dst-{st}" data-key="{escape(key)}" data-status="{st}" x="{r[0] - grow:.1f}" '
                         f'y="{r[1] - grow:.1f}" width="{r[2] + 2 * grow:.1f}" height="{r[3] + 2 * grow:.1f}" rx="5"/>')
        for k, kind, ka, kb in links:
            key = ka if tag == "a" else kb
            r = _box_rect(side, key) if key else None
            if r is None:
                continue
            cx, cy = r[0] + r[2], r[1]
            cells.append(f'<g class="badge-{tag}" data-stop="{k}"><circle class="bg-{kind}" cx="{cx:.1f}" '
                         f'cy="{cy:.1f}" r="10" fill="{colours.get(kind, "#888")}"/><text class="badge" '
                         f'x="{cx:.1f}" y="{cy + 4:.1f}" text-anchor="middle">{k}</text></g>')
        cells.append("</g></svg>")
        parts.append(nested.rstrip().removesuffix("</svg>") + "\n".join(cells))
    parts.append('<g id="links">')
    for k, kind, ka, kb in links[:MAX_LINKS]:
        if ka is None or kb is None:
            continue
        (x1, y1), (x2, y2) = _anchor(a, ka, right=True), _anchor(b, kb, right=False)
        mid = (x1 + x2) / 2
        parts.append(f'<path class="link lk-{kind}" data-stop="{k}" data-a="{escape(ka)}" data-b="{escape(kb)}" '
                     f'd="M{x1:.1f} {y1:.1f}C{mid:.1f} {y1:.1f} {mid:.1f} {y2:.1f} {x2:.1f} {y2:.1f}"/>')
    parts.append("</g></svg>\n")
    return "\n".join(parts)


def _anchor(side: _Side, key: str, *, right: bool) -> tuple[float, float]:
    """Where a link meets box ``key``: the middle of its right (A) or left (B) edge, in the
    picture's coordinates."""
    x, y, w, h = _box_rect(side, key)
    px = (x + (w if right else 0.0)) - side.rect.x() + side.offset[0]
    py = (y + h / 2) - side.rect.y() + side.offset[1]
    return px, py


def _png(display: DiffDisplay, sides: tuple[_Side, _Side], scenes, links, names: tuple[str, str],  # noqa: ANN001
         width: float, height: float, dark: bool, out: Path) -> tuple[int, int]:
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPainterPath, QPen

    from widgets.canvas.export import MAX_PIXELS, MAX_SIDE, fit_scale, render_image

    a, b = sides
    whole = QRectF(0, 0, width, height)
    scale = fit_scale(whole, 2.0, max_side=MAX_SIDE, max_pixels=MAX_PIXELS)
    image = QImage(max(1, int(width * scale)), max(1, int(height * scale)), QImage.Format.Format_ARGB32_Premultiplied)
    colours = {k: QColor(v) for k, v in _colours(dark).items()}
    image.fill(scenes[0].palette_.background)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    for side, scene in zip(sides, scenes):
        picture = render_image(scene, scale=scale, max_side=1 << 30, max_pixels=1 << 62)
        painter.drawImage(QPointF(side.offset[0] * scale, side.offset[1] * scale), picture)
    fg = QColor("#e6e6e6" if dark else "#1f2328")
    font = QFont()
    font.setPixelSize(max(10, int(16 * scale)))
    font.setBold(True)
    painter.setFont(font)
    painter.setPen(fg)
    painter.drawText(QPointF(8 * scale, 22 * scale), f"A  {names[0]}")
    painter.drawText(QPointF((b.offset[0] + 8) * scale, 22 * scale), f"B  {names[1]}")
    font.setPixelSize(max(9, int(12 * scale)))
    font.setBold(False)
    painter.setFont(font)
    x = 8.0
    for status, label, counts in _legend_items(display):
        painter.fillRect(QRectF(x * scale, 36 * scale, 12 * scale, 12 * scale), colours[status])
        painter.setPen(fg)
        text = f"{label} {counts}"
        painter.drawText(QPointF((x + 16) * scale, 47 * scale), text)
        x += 16 + painter.fontMetrics().horizontalAdvance(text) / scale + 18
    for k, kind, ka, kb in links[:MAX_LINKS]:
        if ka is None or kb is None:
            continue
        (x1, y1), (x2, y2) = _anchor(a, ka, right=True), _anchor(b, kb, right=False)
        path = QPainterPath(QPointF(x1 * scale, y1 * scale))
        mid = (x1 + x2) / 2 * scale
        path.cubicTo(QPointF(mid, y1 * scale), QPointF(mid, y2 * scale), QPointF(x2 * scale, y2 * scale))
        pen = QPen(colours.get(kind, QColor("#888")), max(1.0, 2 * scale), Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(path)
    badge = QFont()
    badge.setPixelSize(max(8, int(11 * scale)))
    badge.setBold(True)
    painter.setFont(badge)
    for k, kind, ka, kb in links:
        for side, key in ((a, ka), (b, kb)):
            r = _box_rect(side, key) if key else None
            if r is None:
                continue
            cx = (r[0] + r[2] - side.rect.x() + side.offset[0]) * scale
            cy = (r[1] - side.rect.y() + side.offset[1]) * scale
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colours.get(kind, QColor("#888")))
            painter.drawEllipse(QPointF(cx, cy), 10 * scale, 10 * scale)
            painter.setPen(QColor("#ffffff"))
            painter.drawText(QRectF(cx - 10 * scale, cy - 10 * scale, 20 * scale, 20 * scale),
                             Qt.AlignmentFlag.AlignCenter, str(k))
    painter.end()
    if not image.save(str(out)):
        raise StudioError(f"cannot write {out}")
    return image.width(), image.height()

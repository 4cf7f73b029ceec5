"""Node data drawn into an exported picture: ``render --overlay FILE``, headless.

The window colours boxes by per-node data with a heat-map item on its scene
(:mod:`widgets.overlays.node_data`); an export does the same with the same item and the same
colours (:func:`editor.node_data.overlay_amounts`), and adds what a screen does not need
but a picture does: a legend that says what the colours mean. The legend is a strip above
the graph, drawn at a fixed text size whatever the graph's scale, so it stays readable on
a picture of any size.

PNG: the overlay item goes on the scene before :func:`widgets.canvas.export.export_png`,
the legend strip is added on top of the written image. SVG (written without a scene): the
cells and the legend are SVG elements spliced into the document, the view box grown upward
for the legend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter

from widgets.overlays.heatmap import HeatMapOverlay, heat_colour

__all__ = ["scene_overlay", "add_png_legend", "svg_with_overlay", "overlay_colour", "LEGEND_TEXT_PX"]

#: legend text height in pixels of a PNG at scale 1 (grows with the picture's scale)
LEGEND_TEXT_PX = 14.0


def overlay_colour(numeric: bool) -> Callable[[float, float], QColor]:
    """``colour(amount, peak)`` of node data: numbers on the heat scale (pale yellow to deep
    red), labels (amounts 1..n, see :func:`editor.node_data.overlay_amounts`) each a hue of
    their own, spread by the golden angle so neighbours in the list differ most."""
    if numeric:
        return lambda amount, peak: heat_colour(math.sqrt(max(0.0, amount) / (peak or 1.0)))
    return lambda amount, peak: QColor.fromHsvF(((round(amount) - 1) * 0.618034) % 1.0, 0.7, 0.9)


def scene_overlay(scene, amounts: Mapping[str, float], text: Callable[[float], str], *,
                  numeric: bool = True) -> HeatMapOverlay:
    """The window's heat-map item, placed over ``scene``'s boxes (box key -> amount)."""
    item = HeatMapOverlay()
    scene.addItem(item)
    item.set_times(scene, dict(amounts), text, overlay_colour(numeric))
    return item


def _legend_layout(entries: Sequence[tuple[float, str]], title: str, fm: QFontMetricsF, px: float
                   ) -> tuple[float, float, list[tuple[float, float, str]]]:
    """(width, height, [(x, amount, text)]) of a one-line legend: title, then swatches."""
    pad = px * 0.8
    x = pad + fm.horizontalAdvance(title) + pad * 1.5
    items = []
    for amount, label in entries:
        items.append((x, amount, label))
        x += px * 1.6 + fm.horizontalAdvance(label) + pad * 1.5
    return x, fm.height() + 2 * pad, items


def add_png_legend(path: str | Path, entries: Sequence[tuple[float, str]], title: str, *,
                   scale: float = 1.0, dark: bool = False, numeric: bool = True) -> QSize:
    """Rewrite the PNG at ``path`` with a legend strip above the picture; returns its size."""
    from widgets.canvas.palette import dark_palette, light_palette

    image = QImage(str(path))
    if image.isNull():
        raise OSError(f"cannot read back PNG {str(path)!r}")
    palette = dark_palette() if dark else light_palette()
    px = LEGEND_TEXT_PX * max(1.0, scale)
    font = QFont()
    font.setPixelSize(max(8, int(round(px))))
    fm = QFontMetricsF(font)
    width, height, items = _legend_layout(entries, title, fm, px)
    peak = max((a for a, _ in entries), default=1.0)
    colour = overlay_colour(numeric)
    out = QImage(max(image.width(), int(math.ceil(width))), image.height() + int(math.ceil(height)),
                 QImage.Format.Format_RGB32)
    out.fill(palette.background)
    painter = QPainter(out)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
    painter.drawImage(0, int(math.ceil(height)), image)
    painter.setFont(font)
    pad = px * 0.8
    painter.setPen(palette.box_text)
    painter.drawText(QRectF(pad, 0, width, height), Qt.AlignmentFlag.AlignVCenter, title)
    for x, amount, label in items:
        c = colour(amount, peak)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(c)
        painter.drawRoundedRect(QRectF(x, (height - px) / 2, px * 1.2, px), px * 0.2, px * 0.2)
        painter.setPen(palette.box_text)
        painter.drawText(QRectF(x + px * 1.6, 0, width, height), Qt.AlignmentFlag.AlignVCenter, label)
    painter.end()
    if not out.save(str(path), "PNG", 50):
        raise OSError(f"cannot write PNG {str(path)!r}")
    return out.size()


_SVG_HEAD = re.compile(r'<svg ([^>]*?)width="([\d.]+)" height="([\d.]+)" viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)">')


def svg_with_overlay(svg: str, display, layout, amounts: Mapping[str, float], text: Callable[[float], str],
                     entries: Sequence[tuple[float, str]], title: str, *, dark: bool = False,
                     numeric: bool = True) -> str:
    """``svg`` (as :func:`widgets.canvas.svg.graph_svg` writes it) with a translucent cell
    and a value badge over every box that has an amount, and a legend strip above."""
    from widgets.canvas.palette import dark_palette, light_palette

    m = _SVG_HEAD.search(svg)
    if m is None:
        raise ValueError("not an SVG written by graph_svg")
    palette = dark_palette() if dark else light_palette()
    peak = max(amounts.values(), default=0.0) or 1.0
    colour = overlay_colour(numeric)
    pos = layout.positions
    by_key = {b.key: b for b in display.boxes}
    cells = ['<g id="node-data">']
    for key, amount in sorted(amounts.items(), key=lambda kv: kv[1]):
        b, p = by_key.get(key), pos.get(key)
        if b is None or p is None:
            continue
        c = colour(amount, peak).name()
        label = escape(text(amount))
        bw = 6.0 * len(text(amount)) + 8
        x, y = float(p[0]), float(p[1])
        cells.append(f'<rect x="{x - 2:.1f}" y="{y - 2:.1f}" width="{b.width + 4:.1f}" height="{b.height + 4:.1f}" '
                     f'rx="5" fill="{c}" fill-opacity="0.35" stroke="{c}" stroke-width="3"/>'
                     f'<rect x="{x + b.width - bw + 2:.1f}" y="{y - 17:.1f}" width="{bw:.1f}" height="14" rx="3" '
                     f'fill="{c}"/><text x="{x + b.width - bw / 2 + 2:.1f}" y="{y - 6:.1f}" text-anchor="middle" '
                     f'style="font-size:10px;font-weight:bold">{label}</text>')
    cells.append("</g>")
    px = LEGEND_TEXT_PX
    w, h, vx, vy, vw, vh = (float(v) for v in m.group(2, 3, 4, 5, 6, 7))
    est = _SvgMetrics(px)
    lw, lh, items = _legend_layout(entries, title, est, px)
    top = vy - lh
    legend = [f'<g id="legend"><rect x="{vx:.1f}" y="{top:.1f}" width="{max(vw, lw):.1f}" height="{lh:.1f}" '
              f'fill="{palette.background.name()}"/>',
              f'<text x="{vx + px * 0.8:.1f}" y="{top + lh / 2 + px * 0.35:.1f}" style="font-size:{px:.0f}px" '
              f'fill="{palette.box_text.name()}">{escape(title)}</text>']
    for x, amount, label in items:
        c = colour(amount, peak).name()
        legend.append(f'<rect x="{vx + x:.1f}" y="{top + (lh - px) / 2:.1f}" width="{px * 1.2:.1f}" height="{px:.1f}" '
                      f'rx="{px * 0.2:.1f}" fill="{c}"/><text x="{vx + x + px * 1.6:.1f}" '
                      f'y="{top + lh / 2 + px * 0.35:.1f}" style="font-size:{px:.0f}px" '
                      f'fill="{palette.box_text.name()}">{escape(label)}</text>')
    legend.append("</g>")
    nw = max(vw, lw)
    head = (f'<svg {m.group(1)}width="{nw:.1f}" height="{vh + lh:.1f}" '
            f'viewBox="{vx:.1f} {top:.1f} {nw:.1f} {vh + lh:.1f}">')
    body = svg[:m.start()] + head + svg[m.end():]
    end = body.rindex("</svg>")
    return body[:end] + "\n".join(cells + legend) + body[end:]


class _SvgMetrics:
    """Text widths for the SVG legend without a font: an average glyph of 0.6 em."""

    def __init__(self, px: float) -> None:
        self._px = px

    def horizontalAdvance(self, text: str) -> float:  # noqa: N802 - QFontMetricsF's name
        return 0.6 * self._px * len(text)

    def height(self) -> float:
        return self._px * 1.2

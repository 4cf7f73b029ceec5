"""Open groups drawn as frames, and repeated-block labels.

The compound layout (``editor.layout.compound``) places the members of every open group
inside a rectangle, ``LayoutResult.frames[path] = (x, y, w, h)``, whose top
``FRAME_TITLE`` units are a band free of boxes. ``frame_specs`` turns those into plain
records (path, title, rect, depth); ``FrameLayerItem`` paints all frames of a scene as ONE
item (a graph may have hundreds of open groups); the SVG writer prints the same records.

A frame is a rounded, lightly tinted rectangle with the group's name and a collapse
button ("−") in its title band. Clicking anywhere in the title band collapses the group
(the view asks ``GraphScene.frame_title_at``).

``repeat_classes`` reads ``DisplayGraph.repeats`` (collapsed groups structurally identical
to others) so a group box can say "200 identical blocks" and its tooltip can name the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen, QStaticText
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from widgets.canvas.style import BATCH_LOD, TEXT_LOD, CanvasStyle

from editor.layout.compound import FRAME_TITLE  # the title sits exactly in the band the layout keeps free

FRAME_RADIUS = 8.0
BUTTON_R = 6.5  # radius of the collapse button in the title band


@dataclass(frozen=True)
class FrameSpec:
    path: str          # open group path (what the controller collapses)
    title: str         # display label (DisplayGraph.group_labels, else the last segment)
    x: float
    y: float
    w: float
    h: float
    depth: int         # 0 for a top-level open group; children are drawn above parents

    def rect(self) -> QRectF:
        return QRectF(self.x, self.y, self.w, self.h)

    def title_rect(self) -> QRectF:
        return QRectF(self.x, self.y, self.w, min(FRAME_TITLE, self.h))

    def button_centre(self) -> tuple[float, float]:
        return (self.x + self.w - FRAME_TITLE / 2.0, self.y + min(FRAME_TITLE, self.h) / 2.0)


def frame_specs(display, layout) -> list[FrameSpec]:
    """Frames of the open groups of ``display`` laid out by ``layout``, parents first."""
    frames: Mapping[str, tuple[float, float, float, float]] = getattr(layout, "frames", None) or {}
    if not frames:
        return []
    parents = getattr(display, "group_parents", None) or {}
    labels = getattr(display, "group_labels", None) or {}

    def depth(path: str) -> int:
        d, seen = 0, set()
        p = parents.get(path, "")
        while p and p not in seen:
            seen.add(p)
            d += 1
            p = parents.get(p, "")
        return d

    out = []
    for path, (x, y, w, h) in frames.items():
        title = labels.get(path) or path.rstrip("/").rsplit("/", 1)[-1] or path
        out.append(FrameSpec(path, title, float(x), float(y), float(w), float(h), depth(path)))
    out.sort(key=lambda f: (f.depth, f.path))
    return out


def repeat_classes(display) -> dict[str, tuple[str, ...]]:
    """Group path -> every path of its repeat class (itself included, sorted naturally)."""
    repeats: Mapping[str, int] = getattr(display, "repeats", None) or {}
    classes: dict[int, list[str]] = {}
    for path, cid in repeats.items():
        classes.setdefault(cid, []).append(path)
    out: dict[str, tuple[str, ...]] = {}
    for members in classes.values():
        if len(members) < 2:
            continue
        ordered = tuple(sorted(members, key=_natural))
        for p in ordered:
            out[p] = ordered
    return out


def _natural(text: str) -> tuple:
    """Sort key that puts layers.2 before layers.10."""
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def short_path(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1] or path


def repeat_text(path: str, members: tuple[str, ...]) -> str:
    """'same structure as layers.1 … layers.199 (199 others)' for a tooltip."""
    others = [short_path(p) for p in members if p != path]
    if not others:
        return ""
    if len(others) <= 3:
        listed = ", ".join(others)
    else:
        listed = f"{others[0]} … {others[-1]}"
    return f"same structure as {listed} ({len(others)} other{'s' if len(others) != 1 else ''})"


def frame_colours(style: CanvasStyle) -> tuple[QColor, QColor, QColor]:
    """(fill, border, title band) colours of frames: tints that nest visibly."""
    pal = style.palette
    fill = QColor(pal.selection if not pal.dark else pal.group_fill)
    fill.setAlpha(14 if not pal.dark else 120)
    border = QColor(pal.box_border)
    border.setAlpha(200)
    band = QColor(pal.box_border)
    band.setAlpha(40 if not pal.dark else 60)
    return fill, border, band


def depth_fill(style: CanvasStyle, depth: int) -> QColor:
    """The opaque colour the translucent frame tint composes to at nesting ``depth``
    over the background (frames nest strictly and lie on the background alone)."""
    fill, _, _ = frame_colours(style)
    bg = style.palette.background
    a = fill.alphaF()
    k = 1.0 - (1.0 - a) ** (depth + 1)
    return QColor.fromRgbF(bg.redF() + (fill.redF() - bg.redF()) * k, bg.greenF() + (fill.greenF() - bg.greenF()) * k,
                           bg.blueF() + (fill.blueF() - bg.blueF()) * k)


class FrameLayerItem(QGraphicsItem):
    """Every frame of a scene, painted by one item below the edges (z = -1).

    Geometry and colours are fixed at construction; titles become ``QStaticText`` on the
    first detailed paint and are kept. Below ``TEXT_LOD`` all frames are ONE prebuilt path
    (one fill, one outline: no per-frame Python work, nested tints do not add up there);
    closer in, only the frames meeting the exposed rectangle are painted, found with one
    vectorised test over the rectangles (an LLM with every layer open has ~1,000 frames).

    # NOTE: the tint is painted with opaque per-depth colours (``depth_fill``), not with
    # alpha: frames nest strictly over the bare background, so the picture is the same, and
    # opaque fills of a screen-sized frame cost a fraction of blended ones (measured: four
    # nested translucent frames added ~3 ms to a 1600x1000 frame at 100 %).
    """

    def __init__(self, frames: list[FrameSpec], style: CanvasStyle) -> None:
        super().__init__()
        self._frames = frames
        self._rects = [f.rect() for f in frames]
        self._titles: list[QStaticText | None] = [None] * len(frames)
        self._band_paths: list = [None] * len(frames)
        self._style = style
        import numpy as np

        rect = QRectF()
        whole = QPainterPath()
        whole.setFillRule(Qt.FillRule.WindingFill)
        for r in self._rects:
            rect = rect.united(r)
            whole.addRect(r)
        self._whole = whole
        self._boxes = np.array([(f.x, f.y, f.x + f.w, f.y + f.h) for f in frames], dtype=np.float64).reshape(-1, 4)
        self._bounds = rect.adjusted(-2.0, -2.0, 2.0, 2.0)
        self._set_colours()
        self.setZValue(-1.0)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def _set_colours(self) -> None:
        fill, border, band = frame_colours(self._style)
        self._fill = QBrush(fill)
        self._depth_fills = [QBrush(depth_fill(self._style, d)) for d in range(max((f.depth for f in self._frames), default=0) + 1)]
        self._band = QBrush(band)
        self._pen = QPen(border, 1.0)
        self._pen.setCosmetic(True)
        self._title_pen = QPen(self._style.palette.box_text)
        self._button_pen = QPen(self._style.palette.muted_text, 1.4)
        self._button_brush = QBrush(self._style.palette.box_fill)

    def set_style(self, style: CanvasStyle) -> None:
        self._style = style
        self._set_colours()
        self._titles = [None] * len(self._frames)
        self.update()

    def frames(self) -> list[FrameSpec]:
        return list(self._frames)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()  # clicks are resolved by the scene (frame_title_at)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = QStyleOptionGraphicsItem.levelOfDetailFromTransform(painter.worldTransform())
        exposed = option.exposedRect
        detailed = lod >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod >= BATCH_LOD)
        radius = FRAME_RADIUS
        style = self._style
        if not detailed:
            painter.setPen(self._pen)
            painter.setBrush(self._depth_fills[0])
            painter.drawPath(self._whole)
            return
        b = self._boxes
        visible = ((b[:, 0] <= exposed.right()) & (b[:, 2] >= exposed.left())
                   & (b[:, 1] <= exposed.bottom()) & (b[:, 3] >= exposed.top())).nonzero()[0].tolist()
        frames, rects = self._frames, self._rects
        margin = exposed.adjusted(-4 * radius, -4 * radius, 4 * radius, 4 * radius)
        for i in visible:
            spec, r = frames[i], rects[i]
            painter.setPen(self._pen)
            painter.setBrush(self._depth_fills[spec.depth])
            # NOTE: an open root group can be 100,000 units tall; antialiased fills and
            # strokes of such a shape cost milliseconds even when clipped. Drawn cut to the
            # exposed area (plus a margin, so the cut edges lie off screen) it is the same
            # picture for a fraction of the cost.
            if r.contains(exposed):
                # the view is inside this frame: no edge or corner to draw, just the tint
                painter.fillRect(exposed, self._depth_fills[spec.depth])
            else:
                painter.drawRoundedRect(r.intersected(margin), radius, radius)
            band = spec.title_rect()
            band_path = self._band_paths[i]
            if band_path is None:
                # the band: the frame's top, rounded at the top corners only; built once
                full = QPainterPath()
                full.addRoundedRect(r, radius, radius)
                clip = QPainterPath()
                clip.addRect(band)
                band_path = self._band_paths[i] = full.intersected(clip)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._band)
            painter.drawPath(band_path)
            title = self._titles[i]
            if title is None:
                room = max(spec.w - FRAME_TITLE - 14.0, 10.0)
                text = style.header_metrics.elidedText(spec.title, Qt.TextElideMode.ElideMiddle, room)
                title = self._titles[i] = QStaticText(text)
                title.setTextFormat(Qt.TextFormat.PlainText)
                title.setPerformanceHint(QStaticText.PerformanceHint.AggressiveCaching)
            painter.setFont(style.header_font)
            painter.setPen(self._title_pen)
            ty = band.y() + (band.height() - style.header_metrics.height()) / 2.0
            painter.drawStaticText(QPointF(band.x() + 10.0, ty), title)
            # collapse affordance: a "−" button at the right of the band
            cx, cy = spec.button_centre()
            painter.setPen(self._button_pen)
            painter.setBrush(self._button_brush)
            painter.drawEllipse(QPointF(cx, cy), BUTTON_R, BUTTON_R)
            painter.drawLine(QPointF(cx - 3.2, cy), QPointF(cx + 3.2, cy))


def frame_svg(frames: list[FrameSpec], style: CanvasStyle, rect: QRectF, out: list[str]) -> None:
    """Append the frames inside ``rect`` to an SVG element list (same look as the canvas)."""
    from xml.sax.saxutils import escape

    if not frames:
        return
    fill, border, band = frame_colours(style)
    ascent = style.header_metrics.ascent()
    hm_h = style.header_metrics.height()

    def rgba(c: QColor) -> str:
        return f'"{c.name(QColor.NameFormat.HexRgb)}" '

    out.append('<g id="frames">')
    for f in frames:
        if f.x > rect.right() or f.x + f.w < rect.left() or f.y > rect.bottom() or f.y + f.h < rect.top():
            continue
        out.append(f'<rect x="{f.x:.1f}" y="{f.y:.1f}" width="{f.w:.1f}" height="{f.h:.1f}" rx="{FRAME_RADIUS:.1f}" '
                   f'fill={rgba(fill)}fill-opacity="{fill.alphaF():.3f}" stroke={rgba(border)}'
                   f'stroke-opacity="{border.alphaF():.3f}" stroke-width="1"/>')
        bh = min(FRAME_TITLE, f.h)
        r = FRAME_RADIUS
        out.append(f'<path d="M{f.x:.1f} {f.y + bh:.1f}V{f.y + r:.1f}Q{f.x:.1f} {f.y:.1f} {f.x + r:.1f} {f.y:.1f}'
                   f'H{f.x + f.w - r:.1f}Q{f.x + f.w:.1f} {f.y:.1f} {f.x + f.w:.1f} {f.y + r:.1f}V{f.y + bh:.1f}Z" '
                   f'fill={rgba(band)}fill-opacity="{band.alphaF():.3f}"/>')
        room = max(f.w - FRAME_TITLE - 14.0, 10.0)
        text = style.header_metrics.elidedText(f.title, Qt.TextElideMode.ElideMiddle, room)
        ty = f.y + (bh - hm_h) / 2.0 + ascent
        out.append(f'<text class="k4" x="{f.x + 10.0:.1f}" y="{ty:.1f}"><title>{escape(f.path)}</title>'
                   f'{escape(text)}</text>')
        cx, cy = f.button_centre()
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{BUTTON_R}" fill={rgba(style.palette.box_fill)}'
                   f'stroke={rgba(style.palette.muted_text)}stroke-width="1.4"/>'
                   f'<path d="M{cx - 3.2:.1f} {cy:.1f}H{cx + 3.2:.1f}" stroke={rgba(style.palette.muted_text)}'
                   f'stroke-width="1.4"/>')
    out.append("</g>")

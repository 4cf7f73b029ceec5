"""Graphics items of the canvas for edges: batched edge tiles and the highlight layer.

Edges are not items of their own (see :mod:`widgets.canvas.scene`): an ``EdgeTileItem``
paints every edge starting in one spatial tile as a few prebuilt paths, and one
``HighlightItem`` paints the edges of the hovered/selected boxes and of the path between
two selected boxes over them. Box items live in :mod:`widgets.canvas.items`.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainter, QPainterPath, QPen, QStaticText
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from widgets.canvas.geometry import CORNER, arrow_points, rounded_corners
from widgets.canvas.painting import (
    AA,
    NO_BRUSH,
    NO_PEN,
    ROLE_NEIGHBOUR,
    ROLE_PATH,
    ROLE_SELECTED,
    level_of_detail,
    static_text,
)
from widgets.canvas.style import (
    ANTIALIAS_LOD,
    BATCH_LOD,
    EDGE_DOUBLE_LOD,
    LABEL_LOD,
    TEXT_LOD,
    CanvasStyle,
)

STRAIGHT_LOD = 0.15   # below this zoom edges are stroked straight (rounded corners are invisible)


def rounded_polyline(path: QPainterPath, points: Sequence[tuple[float, float]], radius: float = CORNER) -> None:
    """Append a polyline with rounded corners (quadratic arcs) to ``path``."""
    if len(points) < 2:
        return
    path.moveTo(points[0][0], points[0][1])
    for (ax, ay), (cx, cy), (bx, by) in rounded_corners(points, radius):
        path.lineTo(ax, ay)
        path.quadTo(cx, cy, bx, by)
    path.lineTo(points[-1][0], points[-1][1])


def arrow_head(path: QPainterPath, tip: tuple[float, float], before: tuple[float, float]) -> None:
    """Append a filled triangle pointing from ``before`` to ``tip``."""
    a, b, c = arrow_points(tip, before)
    path.moveTo(*a)
    path.lineTo(*b)
    path.lineTo(*c)
    path.closeSubpath()


class EdgeLabel:
    """A label anchored in the scene; its QStaticText is created on first use, then kept."""

    __slots__ = ("pos", "text", "static", "rect", "kind")

    def __init__(self, pos: QPointF, text: str, rect: QRectF, kind: int = 0) -> None:
        self.pos = pos
        self.text = text
        self.static: QStaticText | None = None
        self.rect = rect
        self.kind = kind  # 0 shape label, 1 reference name


class EdgeTileItem(QGraphicsItem):
    """All edges whose routes start in one spatial tile, painted as a few batched paths."""

    def __init__(self, polylines: list[list[tuple[float, float]]], straight: QPainterPath,
                 arrows: QPainterPath, stubs: QPainterPath, labels: list[EdgeLabel], style: CanvasStyle,
                 body: QPainterPath | None = None) -> None:
        super().__init__()
        # NOTE: zoomed out the tile strokes ``straight`` (the routes as given); closer in, the
        # same routes with rounded corners, built from ``polylines`` on the first such paint
        # and kept: a zoomed-out view or an export of a 15k-edge graph never pays for them.
        # Rounded corners lie inside the polyline's hull: the bounding rect does not change.
        # Edge pens are cosmetic (a fixed 1.3 px): Qt strokes cosmetic pens segment by
        # segment with clipping, a scaled pen through a full outline of the whole path,
        # which made zoomed-in frames 1.5x slower (measured).
        self._polylines = polylines
        self._lines: QPainterPath | None = None
        self._straight = straight
        self._arrows = arrows
        self._stubs = stubs
        self._body = body if body is not None else QPainterPath()   # dashed: Edge.kind "body"
        self._labels = labels
        self._style = style
        rect = straight.boundingRect().united(arrows.boundingRect()).united(stubs.boundingRect()).united(
            self._body.boundingRect())
        for label in labels:
            rect = rect.united(label.rect)
        self._bounds = rect.adjusted(-3.0, -3.0, 3.0, 3.0)
        self.setZValue(0.0)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_style(self, style: CanvasStyle) -> None:
        self._style = style
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def shape(self) -> QPainterPath:
        # Edges are not clickable: an empty shape keeps them out of hit tests.
        return QPainterPath()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = level_of_detail(option, painter)
        style = self._style
        aa = lod >= ANTIALIAS_LOD
        painter.setRenderHint(AA, aa)
        painter.setBrush(NO_BRUSH)
        painter.setPen(style.edge_pen if lod >= TEXT_LOD else style.edge_pen_far)
        # rounded corners are invisible when zoomed far out; straight polylines stroke faster
        if lod >= STRAIGHT_LOD:
            if self._lines is None:
                self._lines = QPainterPath()
                for pts in self._polylines:
                    rounded_polyline(self._lines, pts)
            lines = self._lines
        else:
            lines = self._straight
        painter.drawPath(lines)
        if lod >= EDGE_DOUBLE_LOD:
            # a second 1 px stroke 0.7 px to the right: a 2 px line through the fast line
            # drawer (see the NOTE on edge pens in widgets.canvas.style)
            dx = 0.7 / lod
            painter.translate(dx, 0.0)
            painter.drawPath(lines)
            painter.translate(-dx, 0.0)
        if lod >= ANTIALIAS_LOD:
            painter.setPen(style.no_pen)
            painter.setBrush(style.edge_brush)
            painter.drawPath(self._arrows)
        if not self._body.isEmpty():
            painter.setBrush(NO_BRUSH)
            painter.setPen(style.body_pen)
            painter.drawPath(self._body)
        if not self._stubs.isEmpty():
            painter.setBrush(NO_BRUSH)
            painter.setPen(style.reference_pen)
            painter.drawPath(self._stubs)
        if lod < LABEL_LOD or not self._labels:
            return
        exposed = option.exposedRect
        painter.setFont(style.label_font)
        current = -1
        pens = (style.label_pen, style.reference_pen)
        for label in self._labels:
            if not exposed.intersects(label.rect):
                continue
            if label.kind != current:
                painter.setPen(pens[label.kind])
                current = label.kind
            if label.static is None:
                label.static = static_text(label.text)
            # a halo of background colour keeps the label legible over crossing edges
            painter.fillRect(label.rect, style.label_halo)
            painter.drawStaticText(label.pos, label.static)



class HighlightItem(QGraphicsItem):
    """Edges of the hovered/selected nodes and of the path between two selected nodes."""

    def __init__(self, style: CanvasStyle) -> None:
        super().__init__()
        self._style = style
        self._near = QPainterPath()
        self._near_arrows = QPainterPath()
        self._path = QPainterPath()
        self._path_arrows = QPainterPath()
        self._bounds = QRectF()
        self._marks: list[tuple[int, list[QRectF]]] = []
        self.setZValue(1.5)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_style(self, style: CanvasStyle) -> None:
        self._style = style
        self.update()

    def set_paths(self, near: QPainterPath, near_arrows: QPainterPath, path: QPainterPath, path_arrows: QPainterPath,
                  marks: list[tuple[int, list[QRectF]]] | None = None) -> None:
        """Highlighted edges, and box rectangles by role (drawn only when boxes are batched)."""
        self.prepareGeometryChange()
        self._near, self._near_arrows, self._path, self._path_arrows = near, near_arrows, path, path_arrows
        self._marks = marks or []
        rect = QRectF()
        for _, rects in self._marks:
            for r in rects:
                rect = rect.united(r)
        for p in (near, near_arrows, path, path_arrows):
            if not p.isEmpty():
                rect = rect.united(p.boundingRect())
        self._bounds = rect.adjusted(-4.0, -4.0, 4.0, 4.0) if not rect.isNull() else QRectF()
        self.update()

    def is_empty(self) -> bool:
        return self._near.isEmpty() and self._path.isEmpty()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = level_of_detail(option, painter)
        style = self._style
        painter.setRenderHint(AA, lod >= ANTIALIAS_LOD)
        cosmetic = lod < 0.8
        painter.setBrush(NO_BRUSH)
        if not self._near.isEmpty():
            painter.setPen(style.hl_edge_pen_cosmetic if cosmetic else style.hl_edge_pen)
            painter.drawPath(self._near)
            painter.setPen(NO_PEN)
            painter.setBrush(QBrush(style.palette.highlight))
            painter.drawPath(self._near_arrows)
        if not self._path.isEmpty():
            painter.setBrush(NO_BRUSH)
            painter.setPen(style.path_edge_pen_cosmetic if cosmetic else style.path_edge_pen)
            painter.drawPath(self._path)
            painter.setPen(NO_PEN)
            painter.setBrush(QBrush(style.palette.path))
            painter.drawPath(self._path_arrows)
        if lod < BATCH_LOD and self._marks:
            # boxes are painted in batches now: mark the selected / related ones here
            colours = {ROLE_NEIGHBOUR: style.palette.highlight, ROLE_PATH: style.palette.path, ROLE_SELECTED: style.palette.selection}
            for role, rects in self._marks:
                pen = QPen(colours[role], 3.0 if role == ROLE_SELECTED else 2.0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.setBrush(QBrush(colours[role]) if role == ROLE_SELECTED else NO_BRUSH)
                for r in rects:
                    painter.drawRect(r)

"""Spatial batching: a graph's edges and its zoomed-out boxes as a few items, one per tile.

Edges are NOT items of their own: grouped by the tile their route starts in, they become
``EdgeTileItem``s that paint prebuilt paths, so that a 15k-edge graph is a few hundred
items. At low zoom the box items leave the frame and ``BoxBatchItem``s paint all boxes of a
tile as one path per colour. Both also give the whole-graph paths the minimap and the
overview image draw.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QPainterPath

from widgets.canvas.edge_items import EdgeLabel, EdgeTileItem, arrow_head
from widgets.canvas.geometry import STUB
from widgets.canvas.items import BoxBatchItem, NodeItem
from widgets.canvas.style import CanvasStyle

# NOTE: tile sizes in scene units. Edge tiles are small enough that a zoomed-in view paints
# only a handful of them (and only their labels), big enough that a whole 15k-edge graph is
# a few hundred items. Box batches are only painted zoomed out, so they can be coarser.
EDGE_TILE = 1200.0
BOX_TILE = 4000.0


def edge_tiles(geo, style: CanvasStyle) -> tuple[list[EdgeTileItem], QPainterPath]:
    """One ``EdgeTileItem`` per tile holding the start of a route, an arrow head, a stub or a
    label of ``geo`` (``widgets.canvas.geometry.edge_geometry``); and every route as one path."""

    def cell(x: float, y: float) -> tuple[int, int]:
        return (int(x // EDGE_TILE), int(y // EDGE_TILE))

    # bucket everything by the tile it starts in
    routed: dict[tuple[int, int], list] = defaultdict(list)
    heads: dict[tuple[int, int], list] = defaultdict(list)
    src_stubs: dict[tuple[int, int], list] = defaultdict(list)
    dst_stubs: dict[tuple[int, int], list] = defaultdict(list)
    labels: dict[tuple[int, int], list] = defaultdict(list)
    dashed: dict[tuple[int, int], list] = defaultdict(list)
    for edge, route, pts in geo.routed:
        (dashed if edge.kind == "body" else routed)[cell(*route[0])].append((route, pts))
    for tip, before in geo.heads:
        heads[cell(*tip)].append((tip, before))
    for p in geo.src_stubs:
        src_stubs[cell(*p)].append(p)
    for p in geo.dst_stubs:
        dst_stubs[cell(*p)].append(p)
    for label in geo.labels:
        labels[cell(label.x, label.y)].append(label)
    overview = QPainterPath()
    tiles: list[EdgeTileItem] = []
    for c in sorted(set(routed) | set(dashed) | set(heads) | set(src_stubs) | set(dst_stubs) | set(labels)):
        polylines = []
        straight = QPainterPath()
        for route, pts in routed.get(c, ()):
            polylines.append(pts)
            straight.moveTo(route[0][0], route[0][1])
            for x, y in route[1:]:
                straight.lineTo(x, y)
        body = QPainterPath()
        for route, _ in dashed.get(c, ()):
            body.moveTo(route[0][0], route[0][1])
            for x, y in route[1:]:
                body.lineTo(x, y)
        arrows = QPainterPath()
        for tip, before in heads.get(c, ()):
            arrow_head(arrows, tip, before)
        stubs = QPainterPath()
        for sx, sy in src_stubs.get(c, ()):
            stubs.moveTo(sx, sy)
            stubs.lineTo(sx, sy + STUB)
            stubs.addEllipse(QPointF(sx, sy + STUB + 2.0), 2.0, 2.0)
        for dx, dy in dst_stubs.get(c, ()):
            stubs.moveTo(dx, dy - STUB)
            stubs.lineTo(dx, dy - 6.0)
        tile_labels = [EdgeLabel(QPointF(lb.x, lb.y), lb.text, QRectF(lb.x, lb.y, lb.w, lb.h), lb.kind)
                       for lb in labels.get(c, ())]
        overview.addPath(straight)
        tile = EdgeTileItem(polylines, straight, arrows, stubs, tile_labels, style, body)
        tiles.append(tile)
    return tiles, overview


def box_batches(items: Iterable[NodeItem], colour: Callable[[str], QColor],
                ) -> tuple[list[BoxBatchItem], list[tuple[QColor, QPainterPath]]]:
    """One ``BoxBatchItem`` per tile (a path per category colour); and every box as one path per colour."""
    groups: dict[tuple[int, int], dict[str, QPainterPath]] = defaultdict(dict)
    overview: dict[str, QPainterPath] = {}
    for item in items:
        r = item.scene_rect()
        cell = (int(r.x() // BOX_TILE), int(r.y() // BOX_TILE))
        cat = item.box.category
        path = groups[cell].get(cat)
        if path is None:
            path = groups[cell][cat] = QPainterPath()
        path.addRect(r)
        opath = overview.get(cat)
        if opath is None:
            opath = overview[cat] = QPainterPath()
        opath.addRect(r)
    batches: list[BoxBatchItem] = []
    for _, cats in sorted(groups.items()):
        batch = BoxBatchItem([(colour(c), p) for c, p in sorted(cats.items())])
        batch._categories = sorted(cats)  # type: ignore[attr-defined]
        batches.append(batch)
    return batches, [(colour(c), p) for c, p in sorted(overview.items())]

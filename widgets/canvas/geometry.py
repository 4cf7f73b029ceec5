"""What the canvas draws for edges, as plain data: shared by the scene and the SVG writer.

``edge_geometry`` turns a display graph and its layout into routed polylines (trimmed for
their arrow heads), arrow heads, reference stubs (broadcast edges drawn as short labelled
stubs under the producer and above each consumer) and labels (tensor shapes at the
producer's port, one per output; no label overprints another: a label that would moves
to its port's other side or a line further, else is left out, and the edge's tooltip and
highlight still tell). The scene
buckets these into spatial tiles of QPainterPaths; the SVG writer prints them as is.
Only the label widths need Qt (font metrics), passed in as ``measure``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

Point = tuple[float, float]

CORNER = 10.0  # radius of rounded edge corners (scene units)

ARROW_LEN = 7.0
ARROW_HALF = 3.5
STUB = 16.0


def trimmed_route(points: Sequence[Point]) -> list[Point]:
    """The route with its last segment shortened so the arrow head's tip ends on the port."""
    pts = [(float(x), float(y)) for x, y in points]
    if len(pts) >= 2:
        (px, py), (tx, ty) = pts[-2], pts[-1]
        d = math.hypot(tx - px, ty - py)
        if d > ARROW_LEN:
            k = (d - ARROW_LEN + 0.5) / d
            pts[-1] = (px + (tx - px) * k, py + (ty - py) * k)
    return pts


def arrow_points(tip: Point, before: Point) -> tuple[Point, Point, Point]:
    """Corners of the arrow head pointing from ``before`` to ``tip``."""
    dx, dy = tip[0] - before[0], tip[1] - before[1]
    d = math.hypot(dx, dy)
    if d < 1e-6:
        dx, dy, d = 0.0, 1.0, 1.0
    ux, uy = dx / d, dy / d
    bx, by = tip[0] - ux * ARROW_LEN, tip[1] - uy * ARROW_LEN
    return (tip[0], tip[1]), (bx - uy * ARROW_HALF, by + ux * ARROW_HALF), (bx + uy * ARROW_HALF, by - ux * ARROW_HALF)


@dataclass
class Label:
    x: float
    y: float
    w: float
    h: float
    text: str
    kind: int  # 0 tensor shape, 1 reference (broadcast value name)


@dataclass
class EdgeGeometry:
    routed: list[tuple[object, tuple[Point, ...], list[Point]]] = field(default_factory=list)  # (edge, route, trimmed)
    heads: list[tuple[Point, Point]] = field(default_factory=list)  # (tip, before)
    src_stubs: list[Point] = field(default_factory=list)  # producer port of a reference edge
    dst_stubs: list[Point] = field(default_factory=list)  # consumer port of a reference edge
    labels: list[Label] = field(default_factory=list)
    edges: list = field(default_factory=list)  # every drawn edge (routed or reference)


def _overlaps(a: Label, b: Label) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


class _LabelGrid:
    """Placed labels bucketed by GRID-sized cells: a new label is checked against its
    neighbours only (a flat graph has thousands of labels)."""

    GRID = 64.0

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[Label]] = {}

    def _cells(self, lab: Label) -> list[tuple[int, int]]:
        g = self.GRID
        js = range(math.floor(lab.y / g), math.floor((lab.y + lab.h) / g) + 1)
        return [(i, j) for i in range(math.floor(lab.x / g), math.floor((lab.x + lab.w) / g) + 1) for j in js]

    def free(self, lab: Label) -> bool:
        # (the overlap test inline: a generator and a call per neighbour were a fifth of
        # an 11.8k-node SVG's label placement)
        get = self.cells.get
        x0, y0, x1, y1 = lab.x, lab.y, lab.x + lab.w, lab.y + lab.h
        for c in self._cells(lab):
            for o in get(c, ()):
                if x0 < o.x + o.w and o.x < x1 and y0 < o.y + o.h and o.y < y1:
                    return False
        return True

    def add(self, lab: Label) -> None:
        for c in self._cells(lab):
            self.cells.setdefault(c, []).append(lab)


def _place(grid: _LabelGrid, geo: EdgeGeometry, text: str, w: float, h: float, kind: int,
           spots: Sequence[Point]) -> bool:
    """Put the label at the first of ``spots`` (top-left corners) where it overprints no
    placed label; False (left out) when there is none."""
    for x, y in spots:
        lab = Label(x, y, w, h, text, kind)
        if grid.free(lab):
            grid.add(lab)
            geo.labels.append(lab)
            return True
    return False


def edge_geometry(graph, layout, present: Collection[str], measure: Callable[[str], float], line_h: float) -> EdgeGeometry:
    """Edge drawing data of ``graph`` laid out by ``layout`` (boxes not in ``present`` skipped)."""
    from editor.layout import port_position  # Qt-free core

    routes = layout.routes
    refs = layout.references
    positions = layout.positions
    boxes = {b.key: b for b in graph.boxes}
    geo = EdgeGeometry()
    labelled: set[tuple[str, int]] = set()
    stubbed: set[tuple[str, int]] = set()
    grid = _LabelGrid()
    for edge in graph.edges:
        if edge.src not in present or edge.dst not in present:
            continue
        if edge.key in refs:
            geo.edges.append(edge)
            text = edge.value
            if (edge.src, edge.src_port) not in stubbed:
                stubbed.add((edge.src, edge.src_port))
                sx, sy = port_position(boxes[edge.src], positions[edge.src], "out", edge.src_port)
                geo.src_stubs.append((sx, sy))
                t = f"{text} ⇢"
                w = measure(t)
                y = sy + STUB - line_h / 2.0
                _place(grid, geo, t, w, line_h, 1, ((sx + 5.0, y), (sx - 5.0 - w, y), (sx + 5.0, y + line_h)))
            dx, dy = port_position(boxes[edge.dst], positions[edge.dst], "in", edge.dst_port)
            geo.dst_stubs.append((dx, dy))
            geo.heads.append(((dx, dy), (dx, dy - STUB)))
            t = f"⇢ {text}"
            w = measure(t)
            y = dy - STUB - 2.0
            _place(grid, geo, t, w, line_h, 1, ((dx + 5.0, y), (dx - 5.0 - w, y), (dx + 5.0, y - line_h)))
            continue
        route = routes.get(edge.key)
        if not route or len(route) < 2:
            continue
        geo.edges.append(edge)
        pts = trimmed_route(route)
        geo.routed.append((edge, tuple(route), pts))
        geo.heads.append((tuple(route[-1]), pts[-2]))
        if edge.label and (edge.src, edge.src_port) not in labelled:
            labelled.add((edge.src, edge.src_port))
            x, y = route[0]
            w = measure(edge.label)
            # right of the port below the box; else its left; else a line lower (all in
            # the gap between layers)
            _place(grid, geo, edge.label, w, line_h, 0,
                   ((x + 4.0, y + 2.0), (x - 4.0 - w, y + 2.0), (x + 4.0, y + 2.0 + line_h),
                    (x - 4.0 - w, y + 2.0 + line_h)))
    return geo


def rounded_corners(points: Sequence[Point], radius: float = CORNER):
    """The corners of a polyline rounded with quadratic arcs, as plain data.

    Yields ``(a, c, b)`` per inner corner: draw a line to ``a``, then a quadratic curve with
    control point ``c`` (the corner) to ``b``. Corners of zero-length segments are skipped.
    The canvas (QPainterPath) and the SVG writer draw the same geometry from this.
    """
    for i in range(1, len(points) - 1):
        px, py = points[i - 1]
        cx, cy = points[i]
        nx, ny = points[i + 1]
        d1 = math.hypot(cx - px, cy - py)
        d2 = math.hypot(nx - cx, ny - cy)
        if d1 < 1e-6 or d2 < 1e-6:
            continue
        r = min(radius, d1 / 2.0, d2 / 2.0)
        a = (cx - (cx - px) / d1 * r, cy - (cy - py) / d1 * r)
        b = (cx + (nx - cx) / d2 * r, cy + (ny - cy) / d2 * r)
        yield a, (cx, cy), b

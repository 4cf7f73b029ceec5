"""What the canvas draws for edges, as plain data: shared by the scene and the SVG writer.

``edge_geometry`` turns a display graph and its layout into routed polylines (trimmed for
their arrow heads), arrow heads, reference stubs (broadcast edges drawn as short labelled
stubs under the producer and above each consumer) and labels (tensor shapes at the
producer's port, one per output, none overprinting another of the same box). The scene
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
    by_src: dict[str, list[Label]] = {}
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
                geo.labels.append(Label(sx + 5.0, sy + STUB - line_h / 2.0, measure(t), line_h, t, 1))
            dx, dy = port_position(boxes[edge.dst], positions[edge.dst], "in", edge.dst_port)
            geo.dst_stubs.append((dx, dy))
            geo.heads.append(((dx, dy), (dx, dy - STUB)))
            t = f"⇢ {text}"
            geo.labels.append(Label(dx + 5.0, dy - STUB - 2.0, measure(t), line_h, t, 1))
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
            label = Label(x + 4.0, y + 2.0, measure(edge.label), line_h, edge.label, 0)
            # neighbouring ports of one box: keep the first label, drop ones that would
            # overprint it (the tooltip and the highlight still tell)
            mine = by_src.setdefault(edge.src, [])
            if not any(_overlaps(label, other) for other in mine):
                mine.append(label)
                geo.labels.append(label)
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

"""Which edge lies under a point: the scene's edges are not items, so clicks on them are resolved here.

Route segments (and the stubs of reference edges) are bucketed in a ``GRID``-sized hash
grid, built once per layout on the first query; a query looks at the few cells around the
point only, so hovering a 15k-edge graph stays cheap.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from PySide6.QtCore import QPointF

from widgets.canvas.geometry import STUB
from widgets.canvas.items import NodeItem

GRID = 256.0  # cell size of the hit-test grids (edges here, boxes in the scene)


class EdgeHits:
    """The drawn segments of every edge of one layout, bucketed by grid cell."""

    def __init__(self, geo, layout, items: Mapping[str, NodeItem]) -> None:
        """``geo``: the scene's ``edge_geometry`` (None: no edges); ``layout``: its LayoutResult."""
        grid: dict[tuple[int, int], list[int]] = defaultdict(list)
        segs: list[tuple[float, float, float, float, object]] = []
        if geo is not None:
            def add(x0: float, y0: float, x1: float, y1: float, edge) -> None:
                i = len(segs)
                segs.append((x0, y0, x1, y1, edge))
                for cx in range(int(min(x0, x1) // GRID), int(max(x0, x1) // GRID) + 1):
                    for cy in range(int(min(y0, y1) // GRID), int(max(y0, y1) // GRID) + 1):
                        grid[(cx, cy)].append(i)

            for edge, route, _ in geo.routed:
                for (x0, y0), (x1, y1) in zip(route, route[1:]):
                    add(x0, y0, x1, y1, edge)
            refs = layout.references if layout is not None else ()
            if refs:
                from editor.layout import port_position

                for edge in geo.edges:
                    if edge.key not in refs:
                        continue
                    sx, sy = port_position(items[edge.src].box, layout.positions[edge.src], "out",
                                           edge.src_port)
                    dx, dy = port_position(items[edge.dst].box, layout.positions[edge.dst], "in",
                                           edge.dst_port)
                    add(sx, sy, sx, sy + STUB, edge)
                    add(dx, dy - STUB, dx, dy, edge)
        self._grid = dict(grid)
        self._segments = segs

    def at(self, point: QPointF, tolerance: float):
        """The edge whose segments pass within ``tolerance`` of ``point``, nearest first; None when none does."""
        px, py = point.x(), point.y()
        best, best_d = None, tolerance * tolerance
        seen: set[int] = set()
        segs = self._segments
        for cx in range(int((px - tolerance) // GRID), int((px + tolerance) // GRID) + 1):
            for cy in range(int((py - tolerance) // GRID), int((py + tolerance) // GRID) + 1):
                for i in self._grid.get((cx, cy), ()):
                    if i in seen:
                        continue
                    seen.add(i)
                    x0, y0, x1, y1, edge = segs[i]
                    d = _dist2(px, py, x0, y0, x1, y1)
                    if d <= best_d:
                        best, best_d = edge, d
        return best


def _dist2(px: float, py: float, x0: float, y0: float, x1: float, y1: float) -> float:
    """Squared distance from a point to a segment."""
    dx, dy = x1 - x0, y1 - y0
    L = dx * dx + dy * dy
    t = 0.0 if L <= 0.0 else max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / L))
    qx, qy = x0 + t * dx - px, y0 + t * dy - py
    return qx * qx + qy * qy

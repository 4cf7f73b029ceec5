"""What the scene highlights: shortest paths between boxes, and the drawn path of one edge.

``GraphScene`` lights up the producers and consumers of the hovered and selected boxes and
the shortest path between two selected boxes; the ``HighlightItem`` paints the paths built
here over the edge tiles.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence

from PySide6.QtGui import QPainterPath

from widgets.canvas.edge_items import arrow_head, rounded_polyline
from widgets.canvas.geometry import STUB, trimmed_route
from widgets.canvas.items import NodeItem


def shortest_path(out: Mapping[str, Sequence], a: str, b: str) -> list[str]:
    """Boxes on a shortest directed path a→b, else b→a, over the edges ``out[key]`` leaving each box; [] when neither exists."""
    for s, t in ((a, b), (b, a)):
        path = _bfs(out, s, t)
        if path:
            return path
    return []


def _bfs(out: Mapping[str, Sequence], s: str, t: str) -> list[str]:
    if s == t:
        return [s]
    parent: dict[str, str] = {s: s}
    queue = deque([s])
    while queue:
        cur = queue.popleft()
        for edge in out.get(cur, ()):
            nxt = edge.dst
            if nxt in parent:
                continue
            parent[nxt] = cur
            if nxt == t:
                path = [t]
                while path[-1] != s:
                    path.append(parent[path[-1]])
                path.reverse()
                return path
            queue.append(nxt)
    return []


def edge_path(edge, layout, items: Mapping[str, NodeItem], lines: QPainterPath, arrows: QPainterPath) -> None:
    """Append the drawn route of ``edge`` (its two stubs for a reference) to ``lines``, its arrow head to ``arrows``."""
    if edge.key in layout.references:
        from editor.layout import port_position

        sx, sy = port_position(items[edge.src].box, layout.positions[edge.src], "out", edge.src_port)
        dx, dy = port_position(items[edge.dst].box, layout.positions[edge.dst], "in", edge.dst_port)
        lines.moveTo(sx, sy)
        lines.lineTo(sx, sy + STUB)
        lines.moveTo(dx, dy - STUB)
        lines.lineTo(dx, dy - 6.0)
        arrow_head(arrows, (dx, dy), (dx, dy - STUB))
        return
    route = layout.routes.get(edge.key)
    if not route or len(route) < 2:
        return
    pts = trimmed_route(route)
    rounded_polyline(lines, pts)
    arrow_head(arrows, route[-1], pts[-2])

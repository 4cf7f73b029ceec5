"""Figures of a drawing's quality: crossings, total edge length, size.

These are the figures we compare with Graphviz ``dot`` (the reference of layered drawing):
``onnx-studio render --stats`` prints them, and ``tests/benchmarks/bench_layout_quality.py``
computes them for our layout and for dot's on the same nodes and edges.

A *crossing* is a proper intersection of two segments of different edges' polylines: the
segments cross at a point interior to both. Touching at an end (edges leaving the same port,
meeting at the same target port) and collinear overlaps are not crossings, so edges that
share an endpoint never count. Curves are measured on the polylines they are drawn through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from itertools import chain

import numpy as np

__all__ = ["count_crossings", "polyline_length", "drawing_stats"]

Point = tuple[float, float]
_chain = chain.from_iterable   # every coordinate of routes of points, flat, in C (np.array of 60k tuples is 2x slower)

_CELL_SEGMENTS = 6.0   # aim for about this many segments per grid cell


def _segments(routes: Iterable[Sequence[Point]]) -> tuple[np.ndarray, np.ndarray]:
    """All segments as an (m, 4) array of x0, y0, x1, y1, and the edge index of each."""
    # on flat arrays: a loop per segment was half of this count on an 11.8k-node graph
    # (60k points), and ``render`` counts twice when it sets a picture in columns (issue 30)
    routes = routes if isinstance(routes, list) else list(routes)
    lens = np.fromiter((len(r) for r in routes), dtype=np.int64, count=len(routes))
    pts = np.fromiter(_chain(_chain(routes)), dtype=np.float64).reshape(-1, 2)
    owner = np.repeat(np.arange(len(routes), dtype=np.int64), lens)
    i = np.flatnonzero(owner[:-1] == owner[1:])   # point i to i + 1 of one route
    a, b = pts[i], pts[i + 1]
    keep = (a[:, 0] != b[:, 0]) | (a[:, 1] != b[:, 1])
    return np.hstack([a[keep], b[keep]]).reshape(-1, 4), owner[i[keep]]


def count_crossings(routes: Iterable[Sequence[Point]], involving: Sequence[bool] | np.ndarray | None = None) -> int:
    """Number of proper crossings between segments of different polylines.

    ``involving`` (one flag per route): count only the crossings of which at least one
    route is flagged (what changes when only those routes change shape).

    Segments are bucketed in a uniform grid (a pair is tested once, in the cell holding the
    lower-left corner of their bounding boxes' overlap), so the cost stays near linear for a
    layered drawing whose segments are short compared with the picture.
    """
    s, owner = _segments(routes)
    m = len(s)
    if m < 2:
        return 0
    flag = None if involving is None else np.asarray(involving, dtype=bool)[owner]
    if flag is not None and not flag.any():
        return 0
    x0 = np.minimum(s[:, 0], s[:, 2])
    x1 = np.maximum(s[:, 0], s[:, 2])
    y0 = np.minimum(s[:, 1], s[:, 3])
    y1 = np.maximum(s[:, 1], s[:, 3])
    span_x = float(x1.max() - x0.min()) or 1.0
    span_y = float(y1.max() - y0.min()) or 1.0
    cells = max(1.0, m / _CELL_SEGMENTS)
    cell = max(np.sqrt(span_x * span_y / cells), _median(np.maximum(x1 - x0, y1 - y0)), 1e-6)
    ox, oy = float(x0.min()), float(y0.min())
    cx0 = ((x0 - ox) // cell).astype(np.int64)
    cx1 = ((x1 - ox) // cell).astype(np.int64)
    cy0 = ((y0 - oy) // cell).astype(np.int64)
    cy1 = ((y1 - oy) // cell).astype(np.int64)
    ncx = int(cx1.max()) + 1
    # (segment, cell) memberships
    nx = cx1 - cx0 + 1
    ny = cy1 - cy0 + 1
    cnt = nx * ny
    seg = np.repeat(np.arange(m), cnt)
    start = np.repeat(np.cumsum(cnt) - cnt, cnt)
    local = np.arange(int(cnt.sum())) - start
    cx = cx0[seg] + local % nx[seg]
    cy = cy0[seg] + local // nx[seg]
    cid = cy * ncx + cx
    o = np.lexsort((seg, cid))
    cid, seg = cid[o], seg[o]
    bounds = np.flatnonzero(np.diff(cid)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(cid)]])
    sizes = ends - starts
    if flag is not None:   # only cells holding a flagged segment can hold a counted pair
        hit = np.add.reduceat(flag[seg].astype(np.int64), starts) > 0
        starts, sizes = starts[hit], sizes[hit]
    # all pairs within each cell
    total = 0
    for size in np.unique(sizes):
        if size < 2:
            continue
        sel = starts[sizes == size]
        iu, ju = np.triu_indices(int(size), k=1)
        a = seg[sel[:, None] + iu[None, :]].ravel()
        b = seg[sel[:, None] + ju[None, :]].ravel()
        cell_of = cid[np.repeat(sel, len(iu))]
        keep = owner[a] != owner[b]
        if flag is not None:
            keep &= flag[a] | flag[b]
        a, b, cell_of = a[keep], b[keep], cell_of[keep]
        # test each pair only in the cell of its overlap's lower-left corner
        lx = np.maximum(x0[a], x0[b])
        ly = np.maximum(y0[a], y0[b])
        keep = (lx <= np.minimum(x1[a], x1[b])) & (ly <= np.minimum(y1[a], y1[b]))
        home = ((ly - oy) // cell).astype(np.int64) * ncx + ((lx - ox) // cell).astype(np.int64)
        keep &= home == cell_of
        a, b = a[keep], b[keep]
        total += int(_proper(s[a], s[b]).sum())
    return total


def _median(a: np.ndarray) -> float:
    """``np.median`` of a 1-d float array without its NaN check (which imports ``numpy.ma``:
    a tenth of a second of ``render``'s one layout, once per process)."""
    n = len(a)
    lo, hi = (n - 1) // 2, n // 2
    p = np.partition(a, [lo, hi])
    return float((p[lo] + p[hi]) / 2)


def _proper(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Whether segments p[i] and q[i] cross at a point interior to both."""
    def orient(ax, ay, bx, by, cx, cy):
        v = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        scale = np.abs(bx - ax) + np.abs(by - ay) + np.abs(cx - ax) + np.abs(cy - ay)
        return np.where(np.abs(v) <= 1e-9 * scale * scale, 0.0, np.sign(v))

    d1 = orient(q[:, 0], q[:, 1], q[:, 2], q[:, 3], p[:, 0], p[:, 1])
    d2 = orient(q[:, 0], q[:, 1], q[:, 2], q[:, 3], p[:, 2], p[:, 3])
    d3 = orient(p[:, 0], p[:, 1], p[:, 2], p[:, 3], q[:, 0], q[:, 1])
    d4 = orient(p[:, 0], p[:, 1], p[:, 2], p[:, 3], q[:, 2], q[:, 3])
    return (d1 * d2 < 0) & (d3 * d4 < 0)


def polyline_length(pts: Sequence[Point]) -> float:
    a = np.asarray(pts, dtype=np.float64)
    if len(a) < 2:
        return 0.0
    return float(np.hypot(*(a[1:] - a[:-1]).T).sum())


def drawing_stats(n_boxes: int, n_edges: int, routes: Mapping[str, Sequence[Point]],
                  width: float, height: float) -> dict[str, float | int]:
    """The figures ``render --stats`` prints (lengths in layout units)."""
    rs = list(routes.values())
    return {
        "boxes": n_boxes,
        "edges": n_edges,
        "routed": len(rs),
        "crossings": count_crossings(rs),
        "length": round(sum(polyline_length(r) for r in rs), 1),
        "width": round(float(width), 1),
        "height": round(float(height), 1),
    }

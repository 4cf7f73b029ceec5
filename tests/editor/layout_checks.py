"""Invariant checks of a layout and of the display model's levels, shared by the layout and view-model tests (numpy, no Qt)."""

from __future__ import annotations

from collections import Counter

import numpy as np

from editor.layout import LayoutResult, port_position
from editor.viewmodel import DisplayGraph

TOL = 1e-6


def assert_layout_invariants(dg: DisplayGraph, res: LayoutResult, *, where: str = "") -> None:
    boxes = dg.boxes
    keys = [b.key for b in boxes]
    assert len(set(keys)) == len(keys), f"{where}: duplicate box keys"
    assert set(res.positions) == set(keys), f"{where}: positions do not cover the boxes"
    n = len(boxes)
    if n == 0:
        return
    xy = np.array([res.positions[k] for k in keys], dtype=float)
    wh = np.array([(b.width, b.height) for b in boxes], dtype=float)
    assert np.isfinite(xy).all(), f"{where}: non-finite positions"
    assert (xy >= -TOL).all(), f"{where}: negative coordinates"
    assert (xy[:, 0] + wh[:, 0] <= res.width + TOL).all() and (xy[:, 1] + wh[:, 1] <= res.height + TOL).all(), \
        f"{where}: a box sticks out of width x height"
    # No overlap: sweep boxes by x and compare each with the ones whose x-range it meets.
    # Layered layouts make this cheap: sort by (top, left) and check pairs in the same row
    # band, plus a general O(n log n) check on vertical intervals via the bands.
    x0, y0 = xy[:, 0], xy[:, 1]
    x1, y1 = x0 + wh[:, 0], y0 + wh[:, 1]
    order = np.argsort(x0, kind="stable")
    # For each box, candidates are the following boxes (in x order) whose left edge is left of
    # its right edge; a vectorised window check over a bounded number of neighbours, then an
    # exact fallback for anything the window may have missed.
    xs0, xs1, ys0, ys1 = x0[order], x1[order], y0[order], y1[order]
    reach = np.searchsorted(xs0, xs1, side="left")  # boxes j < reach[i] start before i ends
    cnt = reach - np.arange(n) - 1
    total = int(np.maximum(cnt, 0).sum())
    if total:
        ii = np.repeat(np.arange(n), np.maximum(cnt, 0))
        start = np.repeat(np.cumsum(np.maximum(cnt, 0)) - np.maximum(cnt, 0), np.maximum(cnt, 0))
        jj = ii + 1 + (np.arange(total) - start)
        ov = (np.minimum(ys1[ii], ys1[jj]) - np.maximum(ys0[ii], ys0[jj]) > TOL) & \
             (np.minimum(xs1[ii], xs1[jj]) - np.maximum(xs0[ii], xs0[jj]) > TOL)
        if ov.any():
            k = int(np.flatnonzero(ov)[0])
            a, b = keys[order[ii[k]]], keys[order[jj[k]]]
            raise AssertionError(f"{where}: boxes {a} and {b} overlap")
    # Edges: each is routed or a reference; routes start at the bottom port of the source
    # and end at the top port of the target, leaving downward and arriving from above.
    index = {k: i for i, k in enumerate(keys)}
    for e in dg.edges:
        if e.key in res.references:
            assert e.key not in res.routes, f"{where}: {e.key} both routed and a reference"
            continue
        pts = res.routes.get(e.key)
        assert pts is not None and len(pts) >= 2, f"{where}: edge {e.key} has no route"
        sb, db = boxes[index[e.src]], boxes[index[e.dst]]
        p = port_position(sb, res.positions[e.src], "out", e.src_port)
        q = port_position(db, res.positions[e.dst], "in", e.dst_port)
        assert abs(pts[0][0] - p[0]) < 1e-3 and abs(pts[0][1] - p[1]) < 1e-3, f"{where}: {e.key} does not start at its port"
        assert abs(pts[-1][0] - q[0]) < 1e-3 and abs(pts[-1][1] - q[1]) < 1e-3, f"{where}: {e.key} does not end at its port"
        assert pts[1][1] >= pts[0][1] - TOL, f"{where}: {e.key} leaves its box upward"
        assert pts[-2][1] <= pts[-1][1] + TOL, f"{where}: {e.key} enters its box from below"
    hits = edges_behind_boxes(dg, res)
    assert not hits, f"{where}: {len(hits)} (edge, box) pairs with the edge behind the box, e.g. {hits[:3]}"


def edges_behind_boxes(dg: DisplayGraph, res: LayoutResult, tol: float = 0.5) -> list[tuple[str, str]]:
    """(edge key, box key) of every routed edge with a segment through a box it neither
    starts nor ends at (touching a box's border, within ``tol``, does not count)."""
    keys = [b.key for b in dg.boxes]
    index = {k: i for i, k in enumerate(keys)}
    seg, own = [], []
    for e in dg.edges:
        pts = res.routes.get(e.key)
        if pts and e.src in index and e.dst in index:
            for (ax, ay), (bx, by) in zip(pts, pts[1:]):
                seg.append((ax, ay, bx, by))
                own.append((index[e.src], index[e.dst], len(own)))
    if not keys or not seg:
        return []
    names = [e.key for e in dg.edges if res.routes.get(e.key) and e.src in index and e.dst in index
             for _ in range(len(res.routes[e.key]) - 1)]
    s = np.asarray(seg, dtype=float)
    ends = np.asarray(own, dtype=np.int64)
    xy = np.array([res.positions[k] for k in keys], dtype=float)
    wh = np.array([(b.width, b.height) for b in dg.boxes], dtype=float)
    r0, r1 = xy + tol, xy + wh - tol   # boxes shrunk by the tolerance
    out = []
    step = max(1, 2_000_000 // len(keys))
    for c in range(0, len(s), step):
        # Liang-Barsky clipping of every segment of the chunk against every box at once
        a, d = s[c:c + step, None, :2], s[c:c + step, None, 2:] - s[c:c + step, None, :2]
        with np.errstate(divide="ignore", invalid="ignore"):
            ta, tb = (r0[None] - a) / d, (r1[None] - a) / d
        flat = d == 0
        inside = (r0[None] < a) & (a < r1[None])
        lo = np.where(flat, np.where(inside, 0.0, np.inf), np.minimum(ta, tb))
        hi = np.where(flat, np.where(inside, 1.0, -np.inf), np.maximum(ta, tb))
        t0 = np.maximum(np.maximum(lo[..., 0], lo[..., 1]), 0.0)
        t1 = np.minimum(np.minimum(hi[..., 0], hi[..., 1]), 1.0)
        for i, j in zip(*np.nonzero(t0 < t1)):
            src, dst, k = ends[c + i]
            if j != src and j != dst:
                out.append((names[k], keys[j]))
    return out


def kept_up_to_room(before: dict, after: dict) -> tuple[int, int, Counter]:
    """(boxes that kept their place up to the room an opened frame made, boxes that kept it
    exactly, the moves) over the keys of ``before`` (key -> (x, y)) also in ``after``.

    Opening a group or a body in place makes room where the box was: what lies below moves
    down by one offset, what lies right of the grown frames moves right by one offset. A
    box kept its place when its move is one of those (or none)."""
    moves = Counter((round(after[k][0] - before[k][0]), round(after[k][1] - before[k][1]))
                    for k in before if k in after)
    dx = max(((c, m[0]) for m, c in moves.items() if m[0]), default=(0, 0))[1]
    dy = max(((c, m[1]) for m, c in moves.items() if m[1]), default=(0, 0))[1]
    kept = sum(c for m, c in moves.items() if m in {(0, 0), (dx, 0), (0, dy), (dx, dy)})
    return kept, moves[(0, 0)], moves


def level_cycle(dg: DisplayGraph) -> list[str]:
    """Children of one level of ``dg`` that form a cycle (``G:<path>`` for a group), or ``[]``."""
    def chain(key: str) -> list[str]:
        out, g = [key], dg.box_groups.get(key, "")
        while g:
            out.append("G:" + g)
            g = dg.group_parents.get(g, "")
        return out[::-1]   # outermost first

    succ: dict[str, set[str]] = {}
    for e in dg.edges:
        a, b = chain(e.src), chain(e.dst)
        j = 0
        while j < min(len(a), len(b)) and a[j] == b[j]:
            j += 1
        if j < len(a) and j < len(b):   # (else one lies inside the other: an edge into an open frame)
            succ.setdefault(a[j], set()).add(b[j])
    state: dict[str, int] = {}
    for root in list(succ):
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(succ[root]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                if state.get(w) == 1:
                    return [x for x, _ in stack[[x for x, _ in stack].index(w):]]
                if w not in state:
                    state[w] = 1
                    stack.append((w, iter(succ.get(w, ()))))
                    break
            else:
                state[v] = 2
                stack.pop()
    return []

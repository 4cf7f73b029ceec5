"""Incremental re-layout after an edit: what the user already knows does not move.

# NOTE: strategy. A full layered re-layout after inserting one node shifts every layer below
# it (and x-coordinates everywhere, through the coordinate iterations), which is exactly the
# jump users hate. So for small edits we keep the previous picture *exactly*:
# * boxes present before with the same size keep their position and their layer band;
# * a box whose size changed (an op renamed) keeps its centre and band when it still fits;
# * new boxes go into the layer band below their producers (above their consumers when they
#   have no producers), at the free spot nearest to their neighbours' ports; a band past the
#   bottom is appended when needed (nothing above moves);
# * edges between unchanged boxes keep their routes (they avoid boxes, and new boxes are
#   placed clear of route columns); new edges are routed through the gaps between bands and
#   a free column across the bands they span.
# Large edits (more than ~5% of the boxes new, or a new box taller than its band) fall back to
# a full layout: then the picture changes anyway.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

from editor.viewmodel import Box, DisplayGraph

from editor.layout.sugiyama import DUMMY_GAP, H_GAP, MARGIN, V_GAP

Interval = tuple[float, float]


def _free_spot(occupied: list[Interval], width: float, desired: float) -> float:
    """Left x of a free interval of ``width`` nearest to ``desired`` (left x; never < 0).

    Of the spots that fit, the nearest among ``desired``, ``MARGIN``, the right end of an
    occupied interval and the left end minus ``width`` wins (the smaller x on a tie)."""
    # NOTE: this used to try every such candidate against every interval: O(n^2) for n
    # intervals. A band crossed by many kept routes holds thousands of them (every route
    # column occupies each band it crosses), and opening one 250-node part of a 3.2k-node
    # encoder spent 10 s of CPU here (126 calls, 20M comparisons). Merged free gaps give the
    # same answer in O(n log n): within a gap the nearest candidate is ``desired`` clamped
    # to it, which is one of the candidates above.
    best: tuple[float, float] | None = None

    def gap(lo: float, hi: float) -> None:
        """Free left x in [lo, hi] (either end may be infinite)."""
        nonlocal best
        if hi < lo:
            return
        if lo >= 0:
            spots = (min(max(desired, lo), hi),)
        else:  # only x >= 0 counts, and there only the named spots
            spots = tuple(c for c in (desired, MARGIN, hi) if 0 <= c <= hi)
        for c in spots:
            d = abs(c - desired)
            if best is None or d < best[0] or (d == best[0] and c < best[1]):
                best = (d, c)

    end = -float("inf")  # right end of the occupied run so far
    for a, b in sorted(occupied):
        if a >= end:
            gap(end, a - width)
        end = max(end, b)
    gap(end, float("inf"))
    if best is None:  # everything left of the rightmost interval is taken
        return max(MARGIN, end)
    return best[1]


def _room_for(boxes, previous) -> tuple[dict, dict, list[list[float]]]:
    """(positions, routes, layer bands) of ``previous`` with room made for the boxes of
    ``boxes`` that grew: a band grows down to hold a taller box (what lies below moves down
    by as much), and what lies right of a wider frame moves right by as much. So a frame
    whose group or body opened keeps its corner and its neighbours keep their arrangement."""
    prev_pos, prev_sizes, ranks = previous.positions, previous.sizes, previous.ranks
    layers = [list(t) for t in previous.layers]
    grow: dict[int, float] = {}   # band -> the bottom it must reach
    widen: list[tuple[float, float]] = []   # (old right edge of a frame, how much wider)
    for b in boxes:
        p, old = prev_pos.get(b.key), prev_sizes.get(b.key)
        r = ranks.get(b.key)
        if p is None or old is None or old == (b.width, b.height) or r is None or r >= len(layers):
            continue
        top, bot = layers[r]
        frame = b.key.startswith("f:")   # a frame keeps its top-left corner, a box its centre
        y = p[1] if frame else top + (bot - top - b.height) / 2
        if y + b.height > bot + 0.3 * V_GAP:
            grow[r] = max(grow.get(r, bot), (p[1] if frame else top) + b.height)
        if frame and b.width > old[0]:
            # only as far as its band's next box to the right needs (room left in the gap
            # is used first: a frame that grew a little moves nothing)
            cut = p[0] + old[0]
            nxt = min((x for k, (x, _) in prev_pos.items() if ranks.get(k) == r and x >= cut), default=None)
            # (a frame may take half the gap to its neighbour, as when it keeps its corner)
            if nxt is not None and p[0] + b.width + H_GAP / 2 > nxt:
                widen.append((cut, p[0] + b.width + H_GAP / 2 - nxt))
    if not grow and not widen:
        return prev_pos, previous.routes, layers
    pos, routes = dict(prev_pos), dict(previous.routes)
    for r in sorted(grow, reverse=True):
        _make_room(r, grow[r], layers, pos, ranks, routes)
    for cut, dw in sorted(widen, reverse=True):
        for key, (x, y) in pos.items():
            if x >= cut:
                pos[key] = (x + dw, y)
        for key, route in routes.items():
            if any(x > cut for x, _ in route):
                routes[key] = tuple((x + dw, y) if x > cut else (x, y) for x, y in route)
    return pos, routes, layers


def _make_room(r: int, bottom: float, layers: list[list[float]], pos: dict[str, tuple[float, float]],
               ranks: dict[str, int], routes: dict[str, tuple[tuple[float, float], ...]]) -> None:
    """Grow band ``r`` down to ``bottom``; the bands, boxes and kept route points below it
    move down by as much (a route crossing the cut stretches)."""
    bot = layers[r][1]
    delta = bottom - bot
    if delta <= 0:
        return
    layers[r][1] = bottom
    for band in layers[r + 1:]:
        band[0] += delta
        band[1] += delta
    for key, (x, y) in pos.items():
        if ranks.get(key, -1) > r:
            pos[key] = (x, y + delta)
    for key, route in routes.items():
        if any(y > bot for _, y in route):
            routes[key] = tuple((x, y + delta) if y > bot else (x, y) for x, y in route)


def _near(p: tuple[float, float], q: tuple[float, float]) -> bool:
    return abs(p[0] - q[0]) < 1e-6 and abs(p[1] - q[1]) < 1e-6


def _free_column(bands: list[list[Interval]], desired: float) -> float:
    occ = [iv for band in bands for iv in band]
    left = _free_spot(occ, 2 * DUMMY_GAP, desired - DUMMY_GAP)
    return left + DUMMY_GAP


def incremental_layout(graph: DisplayGraph, previous, check: Callable[[float], None]):
    """A layout of ``graph`` that keeps ``previous`` positions, or ``None`` to lay out afresh."""
    from editor.layout import LayoutResult, port_position

    prev_pos = previous.positions
    prev_sizes = getattr(previous, "sizes", None) or {}
    if not prev_pos or not previous.layers or not previous.ranks or not prev_sizes:
        return None
    boxes = graph.boxes
    n = len(boxes)
    new_keys = [b.key for b in boxes if b.key not in prev_pos]
    if len(new_keys) > max(3, 0.05 * n):
        return None
    check(0.1)
    # a box that grew (a group or body opened inside a frame) gets room first
    prev_pos, prev_routes, layers = _room_for(boxes, previous)
    ranks: dict[str, int] = {}
    pos: dict[str, tuple[float, float]] = {}
    placed_by_band: dict[int, list[Interval]] = {}

    boxes_by_band: dict[int, list[Interval]] = {}   # boxes only (no route columns)
    route_cols: list[tuple[int, float, str]] = []    # (band, x, edge key) of kept routes

    def occupy(r: int, x0: float, x1: float, pad: float, box: bool = False) -> None:
        placed_by_band.setdefault(r, []).append((x0 - pad, x1 + pad))
        if box:
            boxes_by_band.setdefault(r, []).append((x0 - pad, x1 + pad))

    pending: list[Box] = []
    for b in boxes:
        p = prev_pos.get(b.key)
        if p is None:
            pending.append(b)
            continue
        r = previous.ranks.get(b.key)
        if r is None or r >= len(layers):
            return None
        top, bot = layers[r]
        if prev_sizes.get(b.key) == (b.width, b.height):
            pos[b.key] = p
        else:
            ow = prev_sizes.get(b.key, (b.width, b.height))[0]
            pending.append(b)  # resized: re-placed below, near its old centre
            # a resized frame (compound layout) keeps its top-left corner: its contents are
            # placed relative to it; any other box keeps its centre
            x_keep = p[0] if b.key.startswith("f:") else p[0] + ow / 2 - b.width / 2
            y_keep = p[1] if b.key.startswith("f:") else top + (bot - top - b.height) / 2
            if y_keep + b.height > bot + 0.3 * V_GAP:
                return None  # would reach into the next band (_room_for made none): afresh
            pos[b.key] = (x_keep, y_keep)
            ranks[b.key] = r
            continue
        ranks[b.key] = r
        occupy(r, p[0], p[0] + b.width, H_GAP / 2, box=True)
    # Reused routes: an edge between two unmoved boxes keeps its polyline.
    bottoms = [bot for _, bot in layers]
    ordered = all(a[1] <= b[0] for a, b in zip(layers, layers[1:]))

    def crossed(y0: float, y1: float) -> range | list[int]:
        """Bands that the vertical run y0..y1 passes through (bisected: a long route
        crosses hundreds of bands, and there are thousands of routes)."""
        if not ordered:
            return [k for k, (top, bot) in enumerate(layers) if y0 < bot and y1 > top]
        k0 = bisect_right(bottoms, y0)
        k1 = k0
        while k1 < len(layers) and layers[k1][0] < y1:
            k1 += 1
        return range(k0, k1)

    edges = graph.edges
    by_key_all = {b.key: b for b in boxes}
    moved = {b.key for b in pending}
    routes: dict[str, tuple[tuple[float, float], ...]] = {}
    refs: set[str] = set()
    todo = []
    for e in edges:
        if e.src in moved or e.dst in moved or e.src not in pos or e.dst not in pos:
            todo.append(e)
            continue
        if e.key in previous.references:
            refs.add(e.key)
            continue
        r = prev_routes.get(e.key)
        if r is None:
            todo.append(e)
            continue
        # a box that lost or gained an edge spreads its ports anew (Box.in_ports): a route
        # whose ends no longer sit on their ports is routed again
        sb, db = by_key_all[e.src], by_key_all[e.dst]
        if not (_near(r[0], port_position(sb, pos[e.src], "out", e.src_port))
                and _near(r[-1], port_position(db, pos[e.dst], "in", e.dst_port))):
            todo.append(e)
            continue
        routes[e.key] = r
        # the vertical runs of a kept route occupy their column in the bands they cross
        for (xa, ya), (xb, yb) in zip(r, r[1:]):
            if xa == xb:
                for k in crossed(min(ya, yb), max(ya, yb)):
                    occupy(k, xa, xa, DUMMY_GAP)
                    route_cols.append((k, xa, e.key))
    check(0.3)
    by_key = {b.key: b for b in boxes}
    edge_by_key = {e.key: e for e in edges}
    preds: dict[str, list] = {}
    succs: dict[str, list] = {}
    for e in edges:
        preds.setdefault(e.dst, []).append(e)
        succs.setdefault(e.src, []).append(e)
    def _desired_x(b: Box) -> float:
        """Left x that centres ``b`` under its placed producers' and consumers' ports."""
        xs = []
        for e in preds.get(b.key, ()):
            if e.src in pos:
                xs.append(port_position(by_key[e.src], pos[e.src], "out", e.src_port)[0])
        for e in succs.get(b.key, ()):
            if e.dst in pos:
                xs.append(port_position(by_key[e.dst], pos[e.dst], "in", e.dst_port)[0])
        return (sum(xs) / len(xs) - b.width / 2) if xs else MARGIN

    # Place resized boxes first (they want their old spot), then new ones in graph order.
    pending.sort(key=lambda b: (b.key not in prev_pos,))
    for b in pending:
        if b.key in prev_pos:
            r = ranks[b.key]
            x0 = pos[b.key][0]
            top, bot = layers[r]
            # (the frame may take up to half the gap to a neighbour: its own padding)
            if b.key.startswith("f:") and _free_spot(boxes_by_band.get(r, []), b.width, x0) == x0:
                # a grown frame keeps its corner when only kept routes are in its way (a
                # node added inside a group): those routes are routed again around it,
                # instead of the frame and everything it holds jumping aside
                for k, xc, key in route_cols:
                    if k == r and x0 - DUMMY_GAP < xc < x0 + b.width + DUMMY_GAP and key in routes:
                        del routes[key]
                        todo.append(edge_by_key[key])
                pos[b.key] = (x0, pos[b.key][1])
                occupy(r, x0, x0 + b.width, H_GAP / 2, box=True)
                continue
            x = _free_spot(placed_by_band.get(r, []), b.width + H_GAP, x0 - H_GAP / 2) + H_GAP / 2
            pos[b.key] = (x, pos[b.key][1])
            occupy(r, x, x + b.width, H_GAP / 2, box=True)
            continue
        pr = [ranks[e.src] for e in preds.get(b.key, ()) if e.src in ranks]
        sr = [ranks[e.dst] for e in succs.get(b.key, ()) if e.dst in ranks]
        if b.kind == "entry":  # compound layout: a group's boundary entries stay on top
            r = 0
        elif b.kind == "exit":
            r = len(layers) - 1 if layers else 0
        elif pr:
            r = max(pr) + 1
        elif sr:
            r = max(min(sr) - 1, 0)
        else:
            r = 0
        if r < len(layers) and b.height > layers[r][1] - layers[r][0] + 0.6 * V_GAP:
            # NOTE: a box taller than its band (the frame of a group or body just opened)
            # used to go down to the first band tall enough, or a new band at the bottom: a
            # group opened in the middle of a chain landed below the chain's end or at its
            # far right. Its band grows instead and everything below moves down by as much:
            # the picture makes room, nothing changes its place relative to its neighbours.
            _make_room(r, layers[r][0] + b.height, layers, pos, ranks, routes)
            top = layers[r][0]
            x = _free_spot(boxes_by_band.get(r, []), b.width + H_GAP, _desired_x(b) - H_GAP / 2) + H_GAP / 2
            # kept routes that run down through the box's place are routed again around it
            for k, xc, key in route_cols:
                if k == r and x - DUMMY_GAP < xc < x + b.width + DUMMY_GAP and key in routes:
                    del routes[key]
                    todo.append(edge_by_key[key])
            pos[b.key] = (x, top)
            ranks[b.key] = r
            occupy(r, x, x + b.width, H_GAP / 2, box=True)
            continue
        while r < len(layers) and b.height > layers[r][1] - layers[r][0]:
            r += 1
        if r >= len(layers):
            top = (layers[-1][1] if layers else MARGIN - V_GAP) + V_GAP
            layers.append([top, top + b.height])
            r = len(layers) - 1
        top, bot = layers[r]
        x = _free_spot(placed_by_band.get(r, []), b.width + H_GAP, _desired_x(b) - H_GAP / 2) + H_GAP / 2
        pos[b.key] = (x, top + (bot - top - b.height) / 2)
        ranks[b.key] = r
        occupy(r, x, x + b.width, H_GAP / 2, box=True)
    check(0.6)
    half = V_GAP / 2
    for e in todo:
        if e.src not in pos or e.dst not in pos:
            continue
        sb, db = by_key[e.src], by_key[e.dst]
        P = port_position(sb, pos[e.src], "out", e.src_port)
        Q = port_position(db, pos[e.dst], "in", e.dst_port)
        ru, rv = ranks[e.src], ranks[e.dst]
        # a resized box may reach a little past its band: stubs start/end at the box itself
        ybot = max(layers[ru][1], P[1])
        ytop = min(layers[rv][0], Q[1])
        pts = [P]
        if rv == ru + 1:
            pts += [(P[0], ybot), (Q[0], ytop)]
        elif rv > ru + 1:
            xc = _free_column([placed_by_band.get(k, []) for k in range(ru + 1, rv)], (P[0] + Q[0]) / 2)
            pts += [(P[0], ybot), (xc, layers[ru + 1][0]), (xc, layers[rv - 1][1]),
                    (Q[0], ytop)]
            for k in range(ru + 1, rv):
                occupy(k, xc, xc, DUMMY_GAP)
        else:
            lo, hi = rv, ru
            xc = _free_column([placed_by_band.get(k, []) for k in range(lo, hi + 1)], max(P[0], Q[0]) + H_GAP)
            yb = max(layers[ru][1], P[1]) + half
            ya = min(layers[rv][0], Q[1]) - half
            pts += [(P[0], yb), (xc, yb), (xc, ya), (Q[0], ya)]
            for k in range(lo, hi + 1):
                occupy(k, xc, xc, DUMMY_GAP)
        pts.append(Q)
        # drop points equal to their predecessor
        clean = [pts[0]]
        for p in pts[1:]:
            if p != clean[-1]:
                clean.append(p)
        if len(clean) == 1:
            clean.append(Q)
        routes[e.key] = tuple(clean)
    check(0.9)
    width = max([x + by_key[k].width for k, (x, _) in pos.items()] + [previous.width - MARGIN]) + MARGIN
    # NOTE: routes do not widen the picture here: a new edge's free column may sit just right
    # of the rightmost box, inside the margin; growing the width would resize the frame of
    # a compound layout and move everything after it.
    height = max(previous.height, layers[-1][1] + MARGIN + V_GAP / 2) if layers else previous.height
    sizes = {b.key: (b.width, b.height) for b in boxes}
    check(1.0)
    return LayoutResult(positions=pos, routes=routes, references=frozenset(refs), width=width,
                        height=height, ranks=ranks, layers=tuple((a, b) for a, b in layers), sizes=sizes)

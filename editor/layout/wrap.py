"""Wrap a tall layered drawing into side-by-side columns (a picture, not a strip).

A ResNet or a DenseNet laid out top to bottom is 30 to 60 times taller than wide: on a
page or a screen it is a thin line whose text nobody can read. ``wrap_columns`` cuts the
layers into bands at the rank boundaries that the fewest edges cross, and sets the bands
side by side, left to right, so the drawing's aspect ratio lands near ``TARGET_RATIO``.

Boxes and the parts of routes inside a band move with the band. An edge crossing a cut
leaves its band below the band's last layer, runs up the gutter to the right of the band,
over the top of the next band and down into it where its route entered that band before,
so it still never passes through a box (the space below a band's last layer, the gutters
and the space above a band's first layer hold no boxes).
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from editor.viewmodel import DisplayGraph

TALL_RATIO = 8.0      # wrap when height / width exceeds this
TARGET_RATIO = 0.6    # width / height aimed at after wrapping
GUTTER = 28.0         # room between two columns (before lanes)
LANE = 6.0            # spacing of the edges that cross one cut
MAX_COLUMNS = 24
MAX_ADDED_CROSSINGS = 2   # crossings the columns may add (or 1% of the edges, if more)

Point = tuple[float, float]


def wrap_columns(graph: DisplayGraph, res):
    """``res`` (a flat ``LayoutResult``) in columns when it is too tall; else ``res``."""
    from editor.layout import LayoutResult

    if res.frames or not res.layers or not res.ranks or res.width <= 0:
        return res
    if res.height / res.width <= TALL_RATIO:
        return res
    n_ranks = len(res.layers)
    k = min(MAX_COLUMNS, n_ranks, max(2, round(math.sqrt(TARGET_RATIO * res.height / res.width))))
    # columns only where they help: the gutter runs must not add crossings beyond a small
    # bound (a Paddle detector went from 3 crossings in one column to 25 in columns), so
    # fewer columns are tried when the ideal count adds more, and none when two do
    from editor.layout.quality import count_crossings

    before = count_crossings(list(res.routes.values()))
    for cols in range(k, 1, -1):
        out = _wrap_into(graph, res, cols)
        if out is None:
            continue
        if count_crossings(list(out.routes.values())) <= before + max(MAX_ADDED_CROSSINGS, 0.01 * len(out.routes)):
            return out
    return res


def _wrap_into(graph: DisplayGraph, res, k: int):
    """``res`` set in ``k`` columns (None when no cut is found)."""
    from editor.layout import LayoutResult

    n_ranks = len(res.layers)
    tops = np.array([t for t, _ in res.layers])
    bots = np.array([b for _, b in res.layers])
    # edges crossing each rank boundary (between rank r and r + 1)
    ranks = res.ranks
    cross = np.zeros(n_ranks + 1)
    for e in graph.edges:
        if e.key in res.routes:
            a, b = sorted((ranks[e.src], ranks[e.dst]))
            cross[a] += 1
            cross[b] -= 1
    cross = np.cumsum(cross)[:n_ranks - 1]
    # cut near every k-th of the height, at the boundary the fewest edges cross
    cuts: list[int] = []
    total = bots[-1] - tops[0]
    lo = 0
    for j in range(1, k):
        want = tops[0] + total * j / k
        ideal = int(np.searchsorted(tops, want))
        win = max(2, (n_ranks // k) // 4)
        cand = np.arange(max(lo + 1, ideal - win), min(n_ranks - 1, ideal + win))
        if len(cand) == 0:
            continue
        # fewest crossing edges; then nearest to the ideal height
        score = cross[cand - 1] * 1e6 + np.abs(tops[cand] - want)
        c = int(cand[np.argmin(score)])
        cuts.append(c)
        lo = c
    if not cuts:
        return None
    starts = [0] + cuts
    ends = cuts + [n_ranks]
    band_of_rank = np.zeros(n_ranks, dtype=np.int64)
    for bi, (s, e) in enumerate(zip(starts, ends)):
        band_of_rank[s:e] = bi
    nb = len(starts)
    boxes = {b.key: b for b in graph.boxes}
    # horizontal extent of every band (boxes and route points inside it)
    x0 = [math.inf] * nb
    x1 = [-math.inf] * nb
    for key, (x, _) in res.positions.items():
        bi = int(band_of_rank[ranks[key]])
        x0[bi] = min(x0[bi], x)
        x1[bi] = max(x1[bi], x + boxes[key].width)
    cut_y = [float(bots[c - 1] + tops[c]) / 2 for c in cuts]   # mid-gap above each cut rank

    def band_at(y: float) -> int:
        # bisect on a list: np.searchsorted on one float costs ~5 us, and every route
        # point of an 11.8k-node graph asks (116k calls)
        return bisect_left(cut_y, y)

    # a route's run counts in every band it passes, not only where it has points: a long
    # edge is one vertical segment through several bands, and the next column must not be
    # set over it (it ran behind 22 boxes of a Paddle detector's third column)
    for r in res.routes.values():
        for (xa, ya), (xb, yb) in zip(r, r[1:]):
            lo, hi = (xa, xb) if xa <= xb else (xb, xa)
            for bi in range(band_at(min(ya, yb)), band_at(max(ya, yb)) + 1):
                x0[bi] = min(x0[bi], lo)
                x1[bi] = max(x1[bi], hi)
    # edges crossing each cut, to give each its own lane
    crossing: list[dict[str, int]] = [{} for _ in cuts]   # cut -> edge key -> its lane
    for key, r in res.routes.items():
        b0, b1 = band_at(r[0][1]), band_at(r[-1][1])
        for c in range(min(b0, b1), max(b0, b1)):
            crossing[c][key] = len(crossing[c])
    # band offsets: bands side by side, tops aligned
    dx = [0.0] * nb
    dy = [0.0] * nb
    lanes = [len(c) for c in crossing]
    top_room = max(lanes) * LANE + LANE
    x = x0[0]
    for bi in range(nb):
        dx[bi] = x - x0[bi]
        dy[bi] = -(tops[starts[bi]] - tops[0]) + top_room
        gutter = GUTTER + (lanes[bi] * LANE if bi < len(lanes) else 0.0)
        x = x + (x1[bi] - x0[bi]) + gutter
    positions = {k_: (x_ + dx[band_of_rank[ranks[k_]]], y_ + dy[band_of_rank[ranks[k_]]])
                 for k_, (x_, y_) in res.positions.items()}
    band_bottom = [bots[e - 1] + dy[bi] for bi, e in enumerate(ends)]
    band_right = [x1[bi] + dx[bi] for bi in range(nb)]
    routes: dict[str, tuple[Point, ...]] = {}
    for key, r in res.routes.items():
        routes[key] = tuple(_wrap_route(r, band_at, cut_y, dx, dy, band_right,
                                        {c: lanes_c[key] for c, lanes_c in enumerate(crossing) if key in lanes_c}))
    layers = tuple((t + dy[band_of_rank[r]], b + dy[band_of_rank[r]]) for r, (t, b) in enumerate(res.layers))
    width = max(band_right) + 20.0
    height = max(band_bottom) + 40.0
    return LayoutResult(positions=positions, routes=routes, references=res.references, width=width, height=height,
                        ranks=res.ranks, layers=layers, sizes=res.sizes)


def _wrap_route(r, band_at, cut_y, dx, dy, band_right, lane_of) -> list[Point]:
    """A route moved into its bands; across each cut it runs around through the gutter."""
    out: list[Point] = []
    pts = list(r)
    for i, (x, y) in enumerate(pts):
        if i:
            px, py = pts[i - 1]
            b0, b1 = band_at(py), band_at(y)
            if b0 != b1:  # this segment crosses cut(s) b0..b1-1 (downward routes only)
                for c in range(min(b0, b1), max(b0, b1)):
                    yc = cut_y[c]
                    t = (yc - py) / (y - py) if y != py else 0.0
                    xc = px + (x - px) * t
                    lane = lane_of.get(c, 0)
                    y_below = yc + dy[c] + LANE * lane          # below band c's last layer
                    x_gutter = band_right[c] + 10.0 + LANE * lane
                    y_above = yc + dy[c + 1] - LANE * lane      # above band c+1's first layer
                    out += [(xc + dx[c], y_below), (x_gutter, y_below), (x_gutter, y_above),
                            (xc + dx[c + 1], y_above)]
        bi = band_at(y)
        out.append((x + dx[bi], y + dy[bi]))
    return out

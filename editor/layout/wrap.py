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
from collections.abc import Sequence
from bisect import bisect_left
from itertools import chain

import numpy as np

from editor.viewmodel import DisplayGraph

TALL_RATIO = 8.0      # wrap when height / width exceeds this
TARGET_RATIO = 0.6    # width / height aimed at after wrapping
GUTTER = 28.0         # room between two columns (before lanes)
LANE = 6.0            # spacing of the edges that cross one cut
MAX_COLUMNS = 24
MAX_ADDED_CROSSINGS = 2   # crossings the columns may add (or 1% of the edges, if more)

Point = tuple[float, float]
_chain = chain.from_iterable   # every coordinate of routes of points, flat, in C (np.array of 60k tuples is 2x slower)


def wrap_columns(graph: DisplayGraph, res, cuts: Sequence[int] = ()):
    """``res`` (a flat ``LayoutResult``) in columns when it is too tall; else ``res``.

    ``cuts``: the ranks that began the columns of the picture before an edit (its
    ``LayoutResult.cuts``); ``res`` is then set in those same columns, so what the user saw
    stays where it was (when they still fit ``res``; else columns are chosen afresh)."""
    if cuts and res.layers and not res.frames and all(0 < c < len(res.layers) for c in cuts) \
            and list(cuts) == sorted(set(cuts)):
        return _wrap_at(graph, res, list(cuts))
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

    # NOTE: speed. A route inside one band moves with its band, so the crossings among such
    # routes are the same before and after (and routes of different bands meet in neither
    # picture); only the crossings of the routes that now run through a gutter (the ones
    # that gained points) can change. Counting those alone, before and after, gives the
    # same difference as two counts of the whole picture, which were a third of the
    # layout of an 11.8k-node graph.
    before_routes = list(res.routes.values())
    for cols in range(k, 1, -1):
        out = _wrap_into(graph, res, cols)
        if out is None:
            continue
        after_routes = list(out.routes.values())
        moved = [len(a) != len(b) for a, b in zip(before_routes, after_routes)]
        added = count_crossings(after_routes, moved) - count_crossings(before_routes, moved)
        if added <= max(MAX_ADDED_CROSSINGS, 0.01 * len(out.routes)):
            return out
    return res


def _wrap_into(graph: DisplayGraph, res, k: int):
    """``res`` set in ``k`` columns (None when no cut is found)."""
    cuts = _choose_cuts(graph, res, k)
    return _wrap_at(graph, res, cuts) if cuts else None


def _choose_cuts(graph: DisplayGraph, res, k: int) -> list[int]:
    """The ranks that begin columns 2..k: near every k-th of the height, where the fewest
    edges cross."""
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
    return cuts


def _wrap_at(graph: DisplayGraph, res, cuts: list[int]):
    """``res`` set in columns that begin at the ranks ``cuts`` (ascending, within 1..ranks-1)."""
    from editor.layout import LayoutResult

    n_ranks = len(res.layers)
    tops = np.array([t for t, _ in res.layers])
    bots = np.array([b for _, b in res.layers])
    ranks = res.ranks
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

    # NOTE: speed. An 11.8k-node graph has 13.6k routes of 60k points: the per-point work
    # (which band a point lies in, each band's extent, the move into the band) is done on
    # flat arrays, and only the few routes that cross a cut take the Python path
    # (``_wrap_route``); a point-by-point loop cost as much as the layout itself (issue 30).
    keys = list(res.routes)
    lens = np.fromiter((len(r) for r in res.routes.values()), dtype=np.int64, count=len(keys))
    pts = np.fromiter(_chain(_chain(res.routes.values())), dtype=np.float64).reshape(-1, 2)
    band_pt = np.searchsorted(np.asarray(cut_y, dtype=np.float64), pts[:, 1], side="left")
    ends_pt = np.cumsum(lens)
    starts_pt = ends_pt - lens
    # a route's run counts in every band it passes, not only where it has points: a long
    # edge is one vertical segment through several bands, and the next column must not be
    # set over it (it ran behind 22 boxes of a Paddle detector's third column)
    if len(pts) > 1:
        seg = np.ones(len(pts) - 1, dtype=bool)   # point i to i + 1 within one route
        seg[ends_pt[ends_pt < len(pts)] - 1] = False
        i = np.flatnonzero(seg)
        lo_x = np.minimum(pts[i, 0], pts[i + 1, 0])
        hi_x = np.maximum(pts[i, 0], pts[i + 1, 0])
        b_lo = np.minimum(band_pt[i], band_pt[i + 1])
        b_hi = np.maximum(band_pt[i], band_pt[i + 1])
        ext0 = np.asarray(x0, dtype=np.float64)
        ext1 = np.asarray(x1, dtype=np.float64)
        one = b_lo == b_hi
        np.minimum.at(ext0, b_lo[one], lo_x[one])
        np.maximum.at(ext1, b_lo[one], hi_x[one])
        for j in np.flatnonzero(~one).tolist():
            for bi in range(int(b_lo[j]), int(b_hi[j]) + 1):
                ext0[bi] = min(ext0[bi], lo_x[j])
                ext1[bi] = max(ext1[bi], hi_x[j])
        x0, x1 = ext0.tolist(), ext1.tolist()
    # edges crossing each cut, to give each its own lane
    crossing: list[dict[str, int]] = [{} for _ in cuts]   # cut -> edge key -> its lane
    nonempty = lens > 0
    first_band = np.where(nonempty, band_pt[np.minimum(starts_pt, max(len(pts) - 1, 0))] if len(pts) else 0, 0)
    last_band = np.where(nonempty, band_pt[np.maximum(ends_pt - 1, 0)] if len(pts) else 0, 0)
    # lanes nest by where the edges cross the cut. Each edge leaves its band and enters the
    # next at the same x (its route's x at the cut); the rightmost takes the innermost run
    # below its band and up the gutter, and the highest run over the next band: then no two
    # gutter edges cross (one lane number for both ends crossed every pair at the top:
    # 6 to 50 crossings added to a Paddle detector, which kept it a 1:22 strip)
    at_cut: list[list[tuple[float, int, str]]] = [[] for _ in cuts]   # cut -> (-x, route, key)
    for j in np.flatnonzero(first_band != last_band).tolist():
        key = keys[j]
        for c, xc in _cut_xs(res.routes[key], band_at, cut_y).items():
            at_cut[c].append((-xc, j, key))
    lane_of: dict[str, dict[int, tuple[int, int]]] = {}   # key -> cut -> (lane below and up, lane over)
    for c, here in enumerate(at_cut):
        for lane, (_, _, key) in enumerate(sorted(here)):
            crossing[c][key] = lane
            lane_of.setdefault(key, {})[c] = (lane, len(here) - 1 - lane)
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
    dy = [float(v) for v in dy]
    rank_band = band_of_rank.tolist()
    positions = {}
    for k_, (x_, y_) in res.positions.items():
        bi = rank_band[ranks[k_]]
        positions[k_] = (x_ + dx[bi], y_ + dy[bi])
    band_bottom = [bots[e - 1] + dy[bi] for bi, e in enumerate(ends)]
    band_right = [x1[bi] + dx[bi] for bi in range(nb)]
    # routes inside one band move with it; the others run around through the gutters
    lo_band = np.minimum.reduceat(band_pt, starts_pt[nonempty]) if len(pts) else np.zeros(0, dtype=np.int64)
    hi_band = np.maximum.reduceat(band_pt, starts_pt[nonempty]) if len(pts) else np.zeros(0, dtype=np.int64)
    same = np.zeros(len(keys), dtype=bool)
    same[nonempty] = lo_band == hi_band
    same_l = same.tolist()
    # every point moved with its band at once (a route inside one band is read from here)
    moved = pts + np.column_stack([np.asarray(dx)[band_pt], np.asarray(dy)[band_pt]]) if len(pts) else pts
    moved_pts = list(map(tuple, moved.tolist()))
    s_l, e_l = starts_pt.tolist(), ends_pt.tolist()
    routes: dict[str, tuple[Point, ...]] = {}
    for j, (key, r) in enumerate(res.routes.items()):
        if same_l[j]:
            routes[key] = tuple(moved_pts[s_l[j]:e_l[j]])
        else:
            routes[key] = tuple(_wrap_route(r, band_at, cut_y, dx, dy, band_right, lane_of.get(key, {})))
    layers = tuple((t + dy[band_of_rank[r]], b + dy[band_of_rank[r]]) for r, (t, b) in enumerate(res.layers))
    width = max(band_right) + 20.0
    height = max(band_bottom) + 40.0
    return LayoutResult(positions=positions, routes=routes, references=res.references, width=width, height=height,
                        ranks=res.ranks, layers=layers, sizes=res.sizes, cuts=tuple(cuts), strip=res)


def _cut_xs(r, band_at, cut_y) -> dict[int, float]:
    """Where route ``r`` crosses each cut (cut index -> x, before the move)."""
    out: dict[int, float] = {}
    for (px, py), (x, y) in zip(r, r[1:]):
        b0, b1 = band_at(py), band_at(y)
        for c in range(min(b0, b1), max(b0, b1)):
            yc = cut_y[c]
            out[c] = px + (x - px) * ((yc - py) / (y - py) if y != py else 0.0)
    return out


def _wrap_route(r, band_at, cut_y, dx, dy, band_right, lane_of) -> list[Point]:
    """A route moved into its bands; across each cut it runs around through the gutter."""
    out: list[Point] = []
    pts = list(r)
    for i, (x, y) in enumerate(pts):
        if i:
            px, py = pts[i - 1]
            b0, b1 = band_at(py), band_at(y)
            if b0 != b1:  # this segment crosses cut(s) b0..b1-1
                run: list[Point] = []
                for c in range(min(b0, b1), max(b0, b1)):
                    yc = cut_y[c]
                    t = (yc - py) / (y - py) if y != py else 0.0
                    xc = px + (x - px) * t
                    lane, over = lane_of.get(c, (0, 0))
                    y_below = yc + dy[c] + LANE * lane          # below band c's last layer
                    x_gutter = band_right[c] + 10.0 + LANE * lane
                    y_above = yc + dy[c + 1] - LANE * over      # above band c+1's first layer
                    run += [(xc + dx[c], y_below), (x_gutter, y_below), (x_gutter, y_above),
                            (xc + dx[c + 1], y_above)]
                # an upward edge (an edit's incremental layout draws one when a new input
                # comes from lower down) takes the same way back
                out += run if b1 > b0 else run[::-1]
        bi = band_at(y)
        out.append((x + dx[bi], y + dy[bi]))
    return out

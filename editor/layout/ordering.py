"""Crossing reduction: the order of the vertices within each layer (dot's ordering phase).

The method of Gansner et al. ("A technique for drawing directed graphs", 1993, section 3):

* **sweeps** layer by layer, alternately down (each layer ordered by the weighted median of
  its upper neighbours' positions, the upper layer already final) and up; a vertex without
  neighbours on that side keeps its slot;
* after each sweep, **transposition**: adjacent vertices of a layer swap while that lowers
  the crossings with both neighbouring layers, layer by layer until nothing improves;
* the total crossing count is measured after every iteration and the **best ordering seen**
  is kept (a later sweep may be worse); ties go to the earlier one, so the result is a pure
  function of the input.

Ports count: an edge attaches to its vertex at ``position + port fraction`` (fraction in
``(-0.5, 0.5)``), so the two inputs of an ``Add`` are ordered like the vertices feeding
them, and transposition sees the crossings two edges into one box would make.

# NOTE: speed. The sweeps are plain Python over per-layer lists: a layer-by-layer sweep is
# sequential by nature, and most layers hold a handful of vertices, where numpy calls cost
# more than they save. The number of iterations is bounded by a *work budget* (vertex and
# edge visits), not by time, so a 50k-vertex graph gets fewer sweeps than a 500-vertex one
# and the result stays deterministic. The crossing count that picks the best iteration is
# vectorised (:func:`layer_crossings`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

import numpy as np

MAX_ITERS = 24          # dot's default MaxIter
STALL_ITERS = 4         # stop after this many iterations without a better ordering
WORK_BUDGET = 500_000  # vertex + edge visits per run of sweeps (see NOTE above)
TRANSPOSE_PASSES = 4    # passes over a layer's adjacent pairs per transposition


def layer_crossings(seg_layer: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> int:
    """Crossings between straight segments of adjacent layers.

    ``seg_layer`` identifies the layer pair of each segment, ``upper``/``lower`` are the
    segment's end coordinates (any comparable floats). Two segments of one layer pair cross
    when their ends are in opposite order; shared ends do not count. Counted as inversions,
    bit by bit (a radix merge count), all layer pairs at once.
    """
    m = len(seg_layer)
    if m < 2:
        return 0
    # dense integer ranks of the lower ends within each layer pair, segments sorted by
    # (layer pair, upper, lower): crossings are the strict inversions of the lower ranks
    o = np.lexsort((lower, upper, seg_layer))
    lay = seg_layer[o]
    lo_rank = np.unique(lower[o], return_inverse=True)[1].astype(np.int64).ravel()
    total = 0
    idx = np.arange(m)
    # level b: inside groups sharing the layer pair and the bits above b, a 1-bit element
    # before a 0-bit element is an inversion decided at this bit
    for b in range(int(lo_rank.max()).bit_length() - 1, -1, -1):
        prefix = lo_rank >> (b + 1)
        bit = (lo_rank >> b) & 1
        k = np.lexsort((idx, prefix, lay))
        ob = bit[k]
        grp_l, grp_p = lay[k], prefix[k]
        start = np.ones(m, dtype=bool)
        start[1:] = (grp_l[1:] != grp_l[:-1]) | (grp_p[1:] != grp_p[:-1])
        cs = np.cumsum(ob)
        base = np.maximum.accumulate(np.where(start, cs - ob, 0))
        total += int((cs - ob - base)[ob == 0].sum())
    return total


def order_layers(
    n_vertices: int, vrank: np.ndarray, n_layers: int, seg_a: np.ndarray, seg_b: np.ndarray,
    frac_a: np.ndarray, frac_b: np.ndarray, key: np.ndarray, *, check: Callable[[float], None] | None = None,
    work_budget: int | None = None,
) -> np.ndarray:
    """A permutation of the vertices sorted by (layer, position in layer).

    ``seg_a``/``seg_b`` are the upper/lower vertex of each segment (one layer apart),
    ``frac_a``/``frac_b`` the port fraction at each end, ``key`` the initial order within
    a layer.
    """
    N = n_vertices
    perm0 = np.lexsort((key, vrank))
    if N == 0:
        return perm0
    counts = np.bincount(vrank, minlength=n_layers)
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    p0 = perm0.tolist()
    layers: list[list[int]] = [p0[bounds[r]:bounds[r + 1]] for r in range(n_layers)]
    pos = [0] * N
    for lay in layers:
        for i, v in enumerate(lay):
            pos[v] = i
    # adjacency with port fractions, as flat lists (CSR): the neighbours of v on one side
    # are nb[st[v]:st[v + 1]], attached at position + fr[...] (no per-vertex lists: building
    # 10^5 small lists costs more than the sweeps, through the garbage collector)
    up = _csr(N, seg_b, seg_a, frac_a)
    down = _csr(N, seg_a, seg_b, frac_b)
    seg_layer = vrank[seg_a]
    fa_np = np.asarray(frac_a, dtype=np.float64)
    fb_np = np.asarray(frac_b, dtype=np.float64)

    def crossings() -> int:
        p = np.asarray(pos, dtype=np.float64)
        return layer_crossings(seg_layer, p[seg_a] + fa_np, p[seg_b] + fb_np)

    # NOTE: a layer's list is never changed in place (a sweep or a transposition that
    # reorders a layer gives it a new list), so the best ordering seen and the initial one
    # are kept as shallow copies of ``layers``: a tall graph has thousands of layers, and
    # copying each of them at every improvement was a quarter of the ordering's time.
    best = crossings()
    best_layers = list(layers)
    if best == 0:
        return perm0
    work_per_iter = 2 * N + 4 * len(seg_a) + 1
    budget = WORK_BUDGET if work_budget is None else work_budget
    iters = max(2, min(MAX_ITERS, budget // work_per_iter))
    # NOTE: like dot, when the budget allows a second run, the ordering starts again from
    # the initial order with the sweeps in the other direction first; the best of both runs
    # wins (a first downward sweep can lock in an order an upward one would avoid).
    starts = (0, 1) if budget // work_per_iter >= 2 * MAX_ITERS else (0,)
    initial = list(layers)   # read by a second run only
    for first in starts:
        if first:
            layers = list(initial)
            for lay in layers:
                for i, v in enumerate(lay):
                    pos[v] = i
        stall = 0
        dirty = [True] * n_layers
        ver = [0] * n_layers
        seen: tuple[dict, dict] = ({}, {})
        for it in range(iters):
            if check is not None:
                check((first + it / iters) / len(starts))
            downward = (it + first) % 2 == 0
            _sweep(layers, pos, up if downward else down, downward, dirty, ver, seen[(it + first) % 2])
            _transpose(layers, pos, up, down, dirty, ver)
            c = crossings()
            if c < best:
                best = c
                best_layers = list(layers)   # layer lists are never changed in place: see below
                stall = 0
                if c == 0:
                    break
            else:
                stall += 1
                if stall >= STALL_ITERS:
                    break
        if best == 0:
            break
    out = [v for lay in best_layers for v in lay]
    return np.asarray(out, dtype=np.int64)


def _csr(n: int, key: np.ndarray, nbr: np.ndarray, frac: np.ndarray) -> tuple[list[int], list[int], list[float]]:
    o = np.argsort(key, kind="stable")
    st = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n), out=st[1:])
    return st.tolist(), nbr[o].tolist(), np.asarray(frac, dtype=np.float64)[o].tolist()


def _median(vals: list[float]) -> float:
    """dot's weighted median: the median, interpolated toward the denser side for even counts."""
    m = len(vals)
    vals.sort()
    h = m // 2
    if m % 2:
        return vals[h]
    if m == 2:
        return (vals[0] + vals[1]) / 2
    left = vals[h - 1] - vals[0]
    right = vals[-1] - vals[h]
    if left + right == 0:
        return (vals[h - 1] + vals[h]) / 2
    return (vals[h - 1] * right + vals[h] * left) / (left + right)


def _sweep(layers: list[list[int]], pos: list[int], nbr: list, downward: bool, dirty: list[bool],
           ver: list[int], seen: dict) -> None:
    """Reorder every layer by the medians of its neighbours in the previous layer; a layer
    whose order changes marks itself and its neighbours ``dirty`` (for transposition).

    ``ver`` counts the changes of each layer; ``seen`` remembers the versions a layer was
    last sorted against in this direction: sorting again against the same neighbour order
    would give the same result, so such layers are skipped."""
    rng = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
    step = -1 if downward else 1
    st, nb, fr = nbr
    for r in rng:
        lay = layers[r]
        if len(lay) < 2:
            continue
        stamp = (ver[r + step], ver[r])
        if seen.get(r) == stamp:
            continue
        seen[r] = stamp
        med: list[float] = []
        movable = []
        for i, v in enumerate(lay):
            s0 = st[v]
            s1 = st[v + 1]
            if s1 - s0 == 1:  # the common case: a chain vertex or a dummy
                med.append(pos[nb[s0]] + fr[s0])
                movable.append(i)
            elif s1 > s0:
                med.append(_median([pos[nb[k]] + fr[k] for k in range(s0, s1)]))
                movable.append(i)
        if not movable:
            continue
        # vertices without neighbours on this side keep their slots; the others fill the
        # remaining slots in median order (ties keep their current order)
        order = sorted(range(len(movable)), key=lambda k: (med[k], movable[k]))
        if all(k == j for j, k in enumerate(order)):
            continue
        new = list(lay)
        for slot, k in zip(movable, order):
            new[slot] = lay[movable[k]]
        layers[r] = new
        for i, v in enumerate(new):
            pos[v] = i
        ver[r] += 1
        seen[r] = (ver[r + step], ver[r])
        dirty[r] = True
        if r:
            dirty[r - 1] = True
        if r + 1 < len(layers):
            dirty[r + 1] = True


def _pair_crossings(av: list[float], bv: list[float]) -> int:
    """Pairs (a, b) with a > b: crossings of edges at ``av`` (left vertex) and ``bv`` (right)."""
    if len(av) * len(bv) <= 16:
        return sum(1 for a in av for b in bv if a > b)
    sa = sorted(av)
    n = len(sa)
    return sum(n - bisect_right(sa, b) for b in bv)


def _transpose(layers: list[list[int]], pos: list[int], up: list, down: list, dirty: list[bool],
               ver: list[int]) -> None:
    """Swap adjacent vertices while that lowers crossings with both neighbouring layers.

    Only ``dirty`` layers (changed, or next to a changed layer) are visited; a swap makes
    the neighbours dirty again."""
    n_layers = len(layers)
    u_st, u_nb, u_fr = up
    d_st, d_nb, d_fr = down
    for r in range(n_layers):
        if not dirty[r]:
            continue
        dirty[r] = False
        lay = layers[r]
        if len(lay) < 2:
            continue
        uvals = [[pos[u_nb[k]] + u_fr[k] for k in range(u_st[v], u_st[v + 1])] for v in lay]
        dvals = [[pos[d_nb[k]] + d_fr[k] for k in range(d_st[v], d_st[v + 1])] for v in lay]
        lay = layers[r] = list(lay)   # a new list: the best ordering seen may hold the old one
        swapped = False
        for _ in range(TRANSPOSE_PASSES):
            improved = False
            for i in range(len(lay) - 1):
                ua, ub = uvals[i], uvals[i + 1]
                da, db = dvals[i], dvals[i + 1]
                if len(ua) == 1 and len(ub) == 1 and len(da) <= 1 and len(db) <= 1 and (
                        not da or not db):
                    # the common case: one edge each above (at most one below)
                    if ua[0] > ub[0]:
                        lay[i], lay[i + 1] = lay[i + 1], lay[i]
                        uvals[i], uvals[i + 1] = ub, ua
                        dvals[i], dvals[i + 1] = db, da
                        improved = True
                    continue
                keep = _pair_crossings(ua, ub) + _pair_crossings(da, db)
                if keep == 0:
                    continue
                swap = _pair_crossings(ub, ua) + _pair_crossings(db, da)
                if swap < keep:
                    lay[i], lay[i + 1] = lay[i + 1], lay[i]
                    uvals[i], uvals[i + 1] = ub, ua
                    dvals[i], dvals[i + 1] = db, da
                    improved = True
            if not improved:
                break
            swapped = True
        if swapped:
            for i, v in enumerate(lay):
                pos[v] = i
            ver[r] += 1
            if r + 1 < n_layers:
                dirty[r + 1] = True
            # the layer above was visited already; it is revisited in the next round
            if r:
                dirty[r - 1] = True

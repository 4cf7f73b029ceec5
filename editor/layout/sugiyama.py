"""The layered (Sugiyama) layout on plain arrays: ranking, ordering, coordinates, routes.

Everything here works on integer box indices and numpy arrays; no per-edge Python objects
appear in the inner loops. The phases:

1. **ranks** -- cycles broken by a topological order that prefers graph order (ONNX graphs
   are stored topologically sorted, so this is nearly always the identity), longest-path
   ranks, then sources (graph inputs, shape generators) pulled down next to their first
   consumer so they do not dangle from the top of the picture;
2. **references** -- broadcast edges (one tensor feeding many far-apart consumers: rotary
   tables, attention masks) are not routed but drawn as labelled stubs; this keeps dummy
   counts bounded and the picture readable;
3. **dummies** -- every routed edge longer than one rank becomes a chain of dummy vertices;
4. **order** -- barycenter sweeps, all layers at once (Jacobi style): one ``bincount`` for
   the barycenters and one ``lexsort`` by (rank, barycenter) per sweep;
5. **x** -- vertical blocks as in Brandes-Köpf (a vertex and its only non-leaf successor
   move together: straight op chains and dummy chains), then iterative median pulls toward
   the neighbours' (port-adjusted) positions, each followed by a projection onto the
   packing constraints of every layer (left-push by a segmented running maximum, right-push
   by a segmented running minimum, averaged: a vectorised two-sided balancing);
6. **routes** -- polylines from the bottom port of the source through the dummy slots
   (which no box can occupy) to the top port of the target.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from editor.layout.ordering import order_layers

H_GAP = 24.0          # horizontal gap between two boxes of one layer
DUMMY_W = 6.0         # width reserved for an edge passing through a layer
DUMMY_GAP = 8.0       # gap next to a dummy slot
V_GAP = 40.0          # vertical gap between layers
MARGIN = 20.0
PORT_PULL = 0.3       # how much the x pulls honour port offsets (0: centres, 1: ports)

# NOTE: broadcast thresholds. A value with at least REF_MIN_FANOUT consumers, one of them more
# than REF_SPAN ranks away, is a broadcast: its edges longer than REF_NEAR ranks are drawn as
# reference stubs (its nearest consumer stays routed so the producer visibly connects). Any edge longer than REF_MAX_SPAN ranks is a
# reference too: a line across hundreds of layers is unreadable and costs one dummy per rank.
REF_MIN_FANOUT = 3
REF_SPAN = 12
REF_MAX_SPAN = 400
REF_NEAR = 2

Check = Callable[[float], None]


@dataclass
class ArrayLayout:
    """Result of :func:`layout_arrays` (positions are top-left corners)."""

    x: np.ndarray
    y: np.ndarray
    rank: np.ndarray
    routes: list[list[tuple[float, float]] | None]   # per edge; None for references
    reference: np.ndarray                             # bool per edge
    width: float
    height: float
    layer_top: np.ndarray
    layer_bottom: np.ndarray


# --------------------------------------------------------------------------- 1. ranks

def topo_order(n: int, us: np.ndarray, vs: np.ndarray) -> np.ndarray:
    """A topological order preferring low indices; cycles broken at the lowest index."""
    if len(us) == 0 or bool(np.all(us < vs)):
        return np.arange(n)
    indeg = np.bincount(vs, minlength=n).tolist()
    order_e = np.argsort(us, kind="stable")
    succ_start = np.searchsorted(us[order_e], np.arange(n + 1)).tolist()
    succ = vs[order_e].tolist()
    heap = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(heap)
    done = [False] * n
    out: list[int] = []
    nxt_forced = 0
    while len(out) < n:
        if not heap:
            while done[nxt_forced]:
                nxt_forced += 1
            heap.append(nxt_forced)
            indeg[nxt_forced] = 0
        v = heapq.heappop(heap)
        if done[v]:
            continue
        done[v] = True
        out.append(v)
        for k in range(succ_start[v], succ_start[v + 1]):
            w = succ[k]
            if not done[w]:
                indeg[w] -= 1
                if indeg[w] == 0:
                    heapq.heappush(heap, w)
    return np.asarray(out, dtype=np.int64)


def assign_ranks(n: int, us: np.ndarray, vs: np.ndarray, anchor: np.ndarray | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ranks per box; returns (rank, topo_position, reversed_edge_mask)."""
    order = topo_order(n, us, vs)
    tpos = np.empty(n, dtype=np.int64)
    tpos[order] = np.arange(n)
    rev = tpos[us] > tpos[vs]
    a = np.where(rev, vs, us)
    b = np.where(rev, us, vs)
    keep = a != b
    a, b = a[keep], b[keep]
    rank = [0] * n
    if len(a):
        # process edges in topological order of their target: rank[b] = max(rank[a] + 1)
        eo = np.argsort(tpos[b], kind="stable")
        al = a[eo].tolist()
        bl = b[eo].tolist()
        for u, v in zip(al, bl):
            r = rank[u] + 1
            if r > rank[v]:
                rank[v] = r
        # Data-independent parts (weight generators, shape constants and what they feed
        # on their own) hang right above their first consumer instead of piling up at the
        # top of the picture. A vertex is "free" when all its predecessors are free; sources
        # are free unless they are anchors (graph inputs, which are only pulled down
        # themselves). Free vertices and all sources are placed as late as possible.
        indeg_l = np.bincount(b, minlength=n).tolist()
        anchor_l = anchor.tolist() if anchor is not None else [False] * n
        free = [indeg_l[v] == 0 and not anchor_l[v] for v in range(n)]
        pred_ok = [True] * n
        for u, v in zip(al, bl):  # edges in topological order of their target
            if not free[u]:  # u precedes v, so its freedom is final here
                pred_ok[v] = False
            free[v] = pred_ok[v]  # final after v's last incoming edge
        order_e = np.argsort(a, kind="stable")
        succ_start = np.searchsorted(a[order_e], np.arange(n + 1)).tolist()
        succ = b[order_e].tolist()
        for v in reversed(order.tolist()):
            s0, s1 = succ_start[v], succ_start[v + 1]
            if s0 < s1 and (free[v] or indeg_l[v] == 0):
                m = min([rank[w] for w in succ[s0:s1]]) - 1
                if m > rank[v]:
                    rank[v] = m
    rank = np.asarray(rank, dtype=np.int64)
    if n:
        rank -= rank.min()
    return rank, tpos, rev


# --------------------------------------------------------------------------- 2. references

def choose_references(es: np.ndarray, esp: np.ndarray, span: np.ndarray) -> np.ndarray:
    """Bool mask of edges drawn as references (see the NOTE on the thresholds)."""
    m = len(es)
    ref = np.abs(span) > REF_MAX_SPAN
    if m == 0:
        return ref
    # group edges by source port
    key = es.astype(np.int64) * 65536 + esp.astype(np.int64)
    o = np.lexsort((np.abs(span), key))
    ks = key[o]
    new = np.ones(m, dtype=bool)
    new[1:] = ks[1:] != ks[:-1]
    gid = np.cumsum(new) - 1
    fan = np.bincount(gid)
    first = new  # shortest edge of each value (sorted by span within group)
    sp = np.abs(span[o])
    maxspan = np.zeros(len(fan), dtype=sp.dtype)
    np.maximum.at(maxspan, gid, sp)
    # a broadcast value: many consumers, some far away. Then every consumer but the nearest
    # gets a stub unless it sits right below the producer (a fan of lines that all run
    # along the same column says nothing a stub would not).
    broadcast = (fan[gid] >= REF_MIN_FANOUT) & (maxspan[gid] > REF_SPAN)
    big = broadcast & (sp > REF_NEAR) & ~first
    ref[o[big]] = True
    return ref


# --------------------------------------------------------------------------- helpers

def _layer_index(rank: np.ndarray, perm: np.ndarray, n_layers: int) -> tuple[np.ndarray, np.ndarray]:
    """(position of each vertex within its layer, start offset of each layer in ``perm``)."""
    counts = np.bincount(rank, minlength=n_layers)
    start = np.zeros(n_layers + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    pos = np.empty(len(rank), dtype=np.int64)
    pos[perm] = np.arange(len(rank)) - start[rank[perm]]
    return pos, start


# --------------------------------------------------------------------------- main

def layout_arrays(
    w: np.ndarray, h: np.ndarray, es: np.ndarray, ed: np.ndarray, esp: np.ndarray, sfrac: np.ndarray,
    dfrac: np.ndarray, *, check: Check, key0: np.ndarray | None = None,
    anchor: np.ndarray | None = None, pin_top: np.ndarray | None = None,
    pin_bottom: np.ndarray | None = None,
    x_iters: int = 24,
) -> ArrayLayout:
    """Lay out boxes of sizes ``w``/``h`` joined by edges ``es[k] -> ed[k]`` (box indices),
    in the six phases of the module docstring. ``esp[k]``: the source port (edges of one
    value share it); ``sfrac``/``dfrac``: where along the width of its source's bottom /
    its target's top edge each edge attaches (its port)."""
    s = _Sugiyama(w, h, es, ed, esp, sfrac, dfrac, check)
    check(0.0)
    s.ranks(anchor, pin_top, pin_bottom)
    check(0.15)
    s.references()
    s.dummies()
    s.port_offsets()
    check(0.3)
    s.order(key0)
    check(0.6)
    s.packing()
    s.blocks()
    s.median_pulls(x_iters)
    s.straighten()
    check(0.9)
    lay = s.y_and_routes()
    check(1.0)
    return lay


class _Sugiyama:
    """The arrays of one :func:`layout_arrays` call; each phase method adds the ones it produces.

    Vertices ``0..n-1`` are the boxes, ``n..N-1`` the dummies of long edges; "perm order"
    is the vertices sorted by (layer, position in layer)."""

    def __init__(self, w: np.ndarray, h: np.ndarray, es: np.ndarray, ed: np.ndarray, esp: np.ndarray,
                 sfrac: np.ndarray, dfrac: np.ndarray, check: Check) -> None:
        self.w, self.h, self.es, self.ed, self.esp = w, h, es, ed, esp
        self.sfrac, self.dfrac, self.check = sfrac, dfrac, check
        self.n = len(w)
        self.m = len(es)

    def ranks(self, anchor: np.ndarray | None, pin_top: np.ndarray | None, pin_bottom: np.ndarray | None) -> None:
        """``rank`` of every box, its topological position ``tpos``, and the edges the ranking reversed."""
        es, ed, m = self.es, self.ed, self.m
        loops = es == ed
        rank, tpos, rev = assign_ranks(self.n, es[~loops], ed[~loops], anchor)
        # pinned vertices (a group's boundary entries/exits) get a layer of their own on top /
        # at the bottom; they are sources/sinks, so this keeps every edge pointing downward
        if pin_top is not None and pin_top.any():
            rank = np.where(pin_top, 0, rank + 1)
        if pin_bottom is not None and pin_bottom.any():
            rank = np.where(pin_bottom, int(rank[~pin_bottom].max(initial=0)) + 1, rank)
        rev_all = np.zeros(m, dtype=bool)
        rev_all[~loops] = rev
        self.loops, self.rank, self.tpos, self.rev_all = loops, rank, tpos, rev_all

    def references(self) -> None:
        """``ref`` (edges drawn as stubs), and the ``routed`` edges oriented downward: ``ra -> rb`` over ``span`` ranks."""
        es, ed, rank, rev_all = self.es, self.ed, self.rank, self.rev_all
        span_signed = rank[ed] - rank[es]
        ref = choose_references(es, self.esp, span_signed) | self.loops
        routed = np.flatnonzero(~ref)
        # orient routed edges downward: a -> b with rank[a] < rank[b]
        ra = np.where(rev_all[routed], ed[routed], es[routed])
        rb = np.where(rev_all[routed], es[routed], ed[routed])
        # a reversed edge may still point upward or sideways after ranking: force rank order
        span = rank[rb] - rank[ra]
        bad = span <= 0
        if bad.any():
            # equal ranks cannot happen for a -> b with a != b after longest-path ranking; a
            # negative span means the orientation disagrees with the ranks: swap.
            ra2 = np.where(bad, rb, ra)
            rb = np.where(bad, ra, rb)
            ra = ra2
            span = np.abs(span)
            zero = span == 0
            if zero.any():  # pathological (should not happen): treat as reference
                ref[routed[zero]] = True
                keepm = ~zero
                routed, ra, rb, span = routed[keepm], ra[keepm], rb[keepm], span[keepm]
        self.n_layers = int(rank.max()) + 1 if self.n else 0
        self.ref, self.routed, self.ra, self.rb, self.span = ref, routed, ra, rb, span

    def dummies(self) -> None:
        """Dummy vertices of long edges (``vrank`` of all ``N`` vertices) and the segments ``seg_a -> seg_b`` of every chain."""
        n, routed, ra, rb, span = self.n, self.routed, self.ra, self.rb, self.span
        nd = np.maximum(span - 1, 0)
        D = int(nd.sum())
        N = n + D
        # dummy j of routed edge k sits at rank rank[ra[k]] + 1 + j
        d_edge = np.repeat(np.arange(len(routed)), nd)
        d_start = np.zeros(len(routed) + 1, dtype=np.int64)
        np.cumsum(nd, out=d_start[1:])
        d_j = np.arange(D) - d_start[d_edge]
        vrank = np.concatenate([self.rank, self.rank[ra][d_edge] + 1 + d_j])
        # segments: chain ra -> d0 -> d1 ... -> rb for each routed edge
        n_seg = int(span.sum())
        seg_edge = np.repeat(np.arange(len(routed)), span)
        s_start = np.zeros(len(routed) + 1, dtype=np.int64)
        np.cumsum(span, out=s_start[1:])
        s_j = np.arange(n_seg) - s_start[seg_edge]

        # vertex id at chain position p of edge k: p=0 -> ra, p=span -> rb, else dummy
        def chain_vertex(k: np.ndarray, p: np.ndarray) -> np.ndarray:
            sp = span[k]
            out = np.where(p == 0, ra[k], np.where(p == sp, rb[k], n + d_start[k] + p - 1))
            return out
        is_dummy = np.zeros(N, dtype=bool)
        is_dummy[n:] = True
        self.D, self.N, self.d_edge, self.d_start, self.d_j, self.vrank = D, N, d_edge, d_start, d_j, vrank
        self.seg_edge, self.s_j = seg_edge, s_j
        self.seg_a = chain_vertex(seg_edge, s_j)
        self.seg_b = chain_vertex(seg_edge, s_j + 1)
        self.is_dummy = is_dummy

    def port_offsets(self) -> None:
        """Port offsets from the vertex centre at both ends of each segment (``a_off``, ``b_off``; ``frac_*`` for the ordering)."""
        w, es, ed = self.w, self.es, self.ed
        seg_edge, s_j, span, routed = self.seg_edge, self.s_j, self.span, self.routed
        e_of_seg = routed[seg_edge]
        out_off = w[es] * (self.sfrac - 0.5)
        in_off = w[ed] * (self.dfrac - 0.5)
        # offset at segment start (a side) / end (b side); reversed edges swap roles
        e_rev = (self.ra != es[routed])[seg_edge]
        a_off = np.where(s_j == 0, np.where(e_rev, in_off[e_of_seg], out_off[e_of_seg]), 0.0)
        b_off = np.where(s_j + 1 == span[seg_edge], np.where(e_rev, out_off[e_of_seg], in_off[e_of_seg]), 0.0)
        # port fractions for the ordering: where along its slot an edge attaches
        vw0 = np.concatenate([w, np.full(self.D, DUMMY_W)])
        self.frac_a = a_off / np.maximum(vw0[self.seg_a], 1.0)
        self.frac_b = b_off / np.maximum(vw0[self.seg_b], 1.0)
        # NOTE: ports sit spread along the box edge (weights included), so aligning them exactly
        # makes chains drift sideways, one port offset per layer. Aligning mostly centres keeps a
        # chain straight; the residual offset still separates the inputs of a two-input node.
        a_off *= PORT_PULL
        b_off *= PORT_PULL
        self.a_off, self.b_off, self.vw0 = a_off, b_off, vw0

    def order(self, key0: np.ndarray | None) -> None:
        """``perm``: the vertices in layer order after barycenter sweeps; ``lstart``/``lsize`` of each layer."""
        if key0 is None:
            key0 = self.tpos.astype(np.float64)
        else:
            key0 = np.asarray(key0, dtype=np.float64)
        d_edge, span = self.d_edge, self.span
        kr = key0[self.ra][d_edge]
        kb = key0[self.rb][d_edge]
        frac = (self.d_j + 1) / (span[d_edge])
        key = np.concatenate([key0, kr + (kb - kr) * frac])
        check = self.check
        perm = order_layers(self.N, self.vrank, self.n_layers, self.seg_a, self.seg_b, self.frac_a, self.frac_b,
                            key, check=lambda f: check(0.3 + 0.3 * f))
        _pos, lstart = _layer_index(self.vrank, perm, self.n_layers)
        self.perm, self.lstart, self.lsize = perm, lstart, np.diff(lstart)

    def packing(self) -> None:
        """Centre-to-centre separations ``sep`` and in-layer offsets ``off``; ``cx_p`` packed, each layer centred on 0."""
        N, perm, is_dummy, lstart, lsize, vrank = self.N, self.perm, self.is_dummy, self.lstart, self.lsize, self.vrank
        vw = np.concatenate([self.w, np.full(self.D, DUMMY_W)])
        # separation between consecutive vertices of a layer (centre to centre)
        pw = vw[perm]
        pd = is_dummy[perm]
        sep = np.zeros(N)
        if N > 1:
            gap = np.where(pd[1:] | pd[:-1], DUMMY_GAP, H_GAP)
            sep[1:] = (pw[1:] + pw[:-1]) / 2 + gap
        first_in_layer = np.zeros(N, dtype=bool)
        first_in_layer[lstart[:-1][lsize > 0]] = True
        sep[first_in_layer] = 0.0
        csum = np.cumsum(sep)
        off = csum - csum[lstart[vrank[perm]]] if N else csum  # cumulative offset within layer (perm order)
        lay_perm = vrank[perm]
        # initial: packed, each layer centred on 0
        lay_len = np.zeros(self.n_layers)
        if N:
            last = lstart[1:][lsize > 0] - 1
            lay_len[lsize > 0] = off[last]
        self.cx_p = off - lay_len[lay_perm] / 2
        self.vw, self.sep, self.first_in_layer, self.off, self.lay_perm = vw, sep, first_in_layer, off, lay_perm

    def blocks(self) -> None:
        """Vertical blocks (``root`` of each vertex; ``link`` segments inside a block) and the pull sets of the x iteration."""
        N, seg_a, seg_b, perm, is_dummy = self.N, self.seg_a, self.seg_b, self.perm, self.is_dummy
        a_off, b_off = self.a_off, self.b_off
        # A leaf (a box with a single connection: a weight generator, an input, an output) follows
        # its neighbour but barely pulls on it, so the main data path stays straight.
        deg = np.bincount(seg_a, minlength=N) + np.bincount(seg_b, minlength=N)
        leaf = (deg == 1) & ~is_dummy
        inv = np.empty(N, dtype=np.int64)
        inv[perm] = np.arange(N)
        pa = inv[seg_a]
        pb = inv[seg_b]

        # Pull targets/values for "down" (from predecessors) and "up" (from successors) pulls.
        # Leaves pull only on a vertex that has no other neighbour in that direction.
        def pulls(tgt: np.ndarray, src_leaf: np.ndarray) -> np.ndarray:
            nonleaf = np.bincount(tgt[~src_leaf], minlength=N)
            return ~src_leaf | (nonleaf[tgt] == 0)

        # Blocks (as in Brandes-Köpf's vertical alignment): a vertex and its only non-leaf
        # successor, when it is that successor's only non-leaf predecessor, move together. Dummy
        # chains of long edges and straight op chains become one block each, so they come out
        # perfectly vertical and the iteration converges in a few rounds instead of diffusing
        # along a chain one layer per round.
        nl_out = np.bincount(seg_a[~leaf[seg_b]], minlength=N)
        nl_in = np.bincount(seg_b[~leaf[seg_a]], minlength=N)
        link = ~leaf[seg_a] & ~leaf[seg_b] & (nl_out[seg_a] == 1) & (nl_in[seg_b] == 1)
        root = np.arange(N)
        root[seg_b[link]] = seg_a[link]
        while True:  # pointer jumping: log(chain length) rounds
            nxt = root[root]
            if np.array_equal(nxt, root):
                break
            root = nxt
        root_p = root[perm]           # block of each vertex, in perm order
        self.root_of_p = inv[root_p]  # block representative as a perm index
        inter = root[seg_a] != root[seg_b]
        inc_b = pulls(pb, leaf[seg_a]) & inter
        inc_a = pulls(pa, leaf[seg_b]) & inter
        T_dn, T_up = pb[inc_b], pa[inc_a]
        A_dn, B_dn = pa[inc_b], (a_off - b_off)[inc_b]
        A_up, B_up = pb[inc_a], (b_off - a_off)[inc_a]
        T_both = np.concatenate([T_dn, T_up])
        inc_both = pulls(T_both, np.concatenate([leaf[seg_a][inc_b], leaf[seg_b][inc_a]]))
        T_both = T_both[inc_both]
        A_both = np.concatenate([A_dn, A_up])[inc_both]
        B_both = np.concatenate([B_dn, B_up])[inc_both]
        cnt = {0: np.bincount(T_dn, minlength=N), 1: np.bincount(T_up, minlength=N),
               2: np.bincount(T_both, minlength=N)}
        starts = {}
        for k, c in cnt.items():
            st = np.zeros(N, dtype=np.int64)
            np.cumsum(c[:-1], out=st[1:])
            starts[k] = st
        self.pull_count, self.pull_start = cnt, starts
        self.pull_sets = {0: (T_dn, A_dn, B_dn), 1: (T_up, A_up, B_up), 2: (T_both, A_both, B_both)}
        self.link, self.root = link, root

    def median_pulls(self, x_iters: int) -> None:
        """``cx_p`` after ``x_iters`` rounds of median pulls toward the neighbours, each projected onto the packing."""
        N, cx_p, root_of_p, check = self.N, self.cx_p, self.root_of_p, self.check
        cnt, starts, sets = self.pull_count, self.pull_start, self.pull_sets
        for it in range(x_iters):
            if it % 4 == 0:
                check(0.6 + 0.3 * it / max(x_iters, 1))
            # alternate down/up/both pulls, then settle with both-sided pulls only
            mode = (2, 0, 2, 1)[it % 4] if it < x_iters - 8 else 2
            T, A, B = sets[mode]
            c = cnt[mode]
            # weighted-free median of the neighbours' (port-adjusted) positions, per vertex
            vals = cx_p[A] + B
            o = np.lexsort((vals, T))
            vs = vals[o]
            st = starts[mode]
            has = c > 0
            lo = st + np.maximum(c - 1, 0) // 2
            hi = st + c // 2
            med = np.where(has, (vs[np.minimum(lo, len(vs) - 1)] + vs[np.minimum(hi, len(vs) - 1)]) / 2, cx_p) \
                if len(vs) else cx_p
            # a block moves as one: the mean of its members' wishes (members without any
            # outside neighbour have no wish)
            wsum = np.bincount(root_of_p, weights=np.where(has, med, 0.0), minlength=N)
            wcnt = np.bincount(root_of_p, weights=has.astype(np.float64), minlength=N)
            bdes = np.where(wcnt > 0, wsum / np.maximum(wcnt, 1), cx_p)
            desired = np.where(wcnt[root_of_p] > 0, bdes[root_of_p], med)
            cx_p = _project(desired, self.off, self.lay_perm, self.n_layers)
        self.cx_p = cx_p

    def straighten(self) -> None:
        """``cx_p`` with each block moved, as a whole, to where its members line up port to port
        (wherever the layers' packing leaves room for that)."""
        seg_a, seg_b, vw0 = self.seg_a, self.seg_b, self.vw0
        rel = _block_offsets(self.N, seg_a, seg_b, self.link, self.root,
                             self.frac_a * vw0[seg_a] - self.frac_b * vw0[seg_b], self.vrank)
        self.cx_p = _straighten(self.cx_p, self.sep, self.first_in_layer, self.root_of_p, rel[self.perm])

    def y_and_routes(self) -> ArrayLayout:
        """The result: layer bands, box corners shifted to the margin, and the route of every routed edge."""
        n, N, n_layers, rank, w, h, vw = self.n, self.N, self.n_layers, self.rank, self.w, self.h, self.vw
        cx = np.empty(N)
        cx[self.perm] = self.cx_p
        lh = np.zeros(n_layers)
        if n:
            np.maximum.at(lh, rank, h)
        lh = np.maximum(lh, 8.0)  # layers holding only dummies still get a little room
        layer_top = np.zeros(n_layers)
        if n_layers:
            layer_top[1:] = np.cumsum(lh + V_GAP)[:-1]
        layer_top += MARGIN
        layer_bottom = layer_top + lh
        minx = float((cx - vw / 2).min()) if N else 0.0
        shift = MARGIN - minx
        cx += shift
        x = cx[:n] - w / 2
        y = layer_top[rank] + (lh[rank] - h) / 2
        routes = _routes(n, self.m, self.es, self.ed, self.sfrac, self.dfrac, x, y, w, h, rank,
                         self.ref, self.routed, self.ra, self.rb, self.span, self.d_start, cx, layer_top, layer_bottom)
        width = float((cx + vw / 2).max()) + MARGIN if N else 2 * MARGIN
        height = float(layer_bottom[-1]) + MARGIN + V_GAP / 2 if n_layers else 2 * MARGIN
        return ArrayLayout(x=x, y=y, rank=rank, routes=routes, reference=self.ref, width=width, height=height,
                           layer_top=layer_top, layer_bottom=layer_bottom)


def _block_offsets(N: int, seg_a: np.ndarray, seg_b: np.ndarray, link: np.ndarray, root: np.ndarray,
                   port_shift: np.ndarray, vrank: np.ndarray) -> np.ndarray:
    """Centre offset of every vertex from its block's root that makes each link segment
    vertical from port to port (``port_shift`` = source port offset - target port offset)."""
    rel = np.zeros(N)
    la, lb, ls = seg_a[link], seg_b[link], port_shift[link]
    o = np.argsort(vrank[la], kind="stable")   # a block's links, top to bottom
    rel_l = rel.tolist()
    for a, b, d in zip(la[o].tolist(), lb[o].tolist(), ls[o].tolist()):
        rel_l[b] = rel_l[a] + d
    rel = np.asarray(rel_l)
    return rel - rel[root]


def _straighten(cx_p: np.ndarray, sep: np.ndarray, first: np.ndarray, block: np.ndarray,
                rel: np.ndarray, passes: int = 2) -> np.ndarray:
    """Move each block (members ``block``, perm order) to the mean of its members' implied
    positions, clipped to the room its members' layer neighbours leave; packing is kept.

    Python, block by block, so that every move sees the moves before it (vectorised moves
    of neighbouring blocks could collide)."""
    n = len(cx_p)
    if n == 0:
        return cx_p
    cx = cx_p.tolist()
    sp = sep.tolist()
    has_left = (~first).tolist()
    has_right = np.append(~first[1:], False).tolist()
    rl = rel.tolist()
    members: dict[int, list[int]] = {}
    for p, b in enumerate(block.tolist()):
        members.setdefault(b, []).append(p)
    groups = [m for m in members.values() if len(m) > 1]
    inf = float("inf")
    for _ in range(passes):
        for mem in groups:
            lo, hi, tot = -inf, inf, 0.0
            for p in mem:
                r = rl[p]
                tot += cx[p] - r
                if has_left[p]:
                    v = cx[p - 1] + sp[p] - r
                    if v > lo:
                        lo = v
                if has_right[p]:
                    v = cx[p + 1] - sp[p + 1] - r
                    if v < hi:
                        hi = v
            if lo > hi:
                continue
            t = min(max(tot / len(mem), lo), hi)
            for p in mem:
                cx[p] = t + rl[p]
    return np.asarray(cx)


def _project(desired: np.ndarray, off: np.ndarray, lay: np.ndarray, n_layers: int) -> np.ndarray:
    """Closest-ish packing: centres ``c`` with ``c[i+1] - c[i] >= sep`` in every layer.

    With ``y = c - off`` the constraints read "y non-decreasing within a layer". A running
    maximum pushes violators right, a running minimum from the right pushes them left; the
    mean of two non-decreasing sequences is non-decreasing, so the average is feasible.
    """
    if len(desired) == 0:
        return desired
    yv = desired - off
    span = float(np.abs(yv).max()) * 2 + 1.0
    big = lay * span * 4.0
    a = np.maximum.accumulate(yv + big) - big
    b = (np.minimum.accumulate((yv + big)[::-1]) - big[::-1])[::-1]
    return (a + b) / 2 + off


def _routes(n, m, es, ed, sfrac, dfrac, x, y, w, h, rank, ref, routed, ra, rb, span, d_start,
            cx, layer_top, layer_bottom) -> list[list[tuple[float, float]] | None]:
    routes: list[list[tuple[float, float]] | None] = [None] * m
    if m == 0:
        return routes
    px = x[es] + w[es] * sfrac
    py = y[es] + h[es]
    qx = x[ed] + w[ed] * dfrac
    qy = y[ed]
    pxl, pyl, qxl, qyl = px.tolist(), py.tolist(), qx.tolist(), qy.tolist()
    rankl = rank.tolist()
    ltop = layer_top.tolist()
    lbot = layer_bottom.tolist()
    cxl = cx.tolist()
    dsl = d_start.tolist()
    rl = routed.tolist()
    ral = ra.tolist()
    esl = es.tolist()
    edl = ed.tolist()
    xl = x.tolist()
    wl = w.tolist()
    half = V_GAP / 2
    for k, e in enumerate(rl):
        u, v = esl[e], edl[e]
        P = (pxl[e], pyl[e])
        Q = (qxl[e], qyl[e])
        ru, rv = rankl[u], rankl[v]
        d0, d1 = dsl[k], dsl[k + 1]
        pts = [P]
        if ral[k] == u:  # downward edge
            if lbot[ru] > P[1]:
                pts.append((P[0], lbot[ru]))
            r = ru + 1
            for d in range(n + d0, n + d1):
                xd = cxl[d]
                pts.append((xd, ltop[r]))
                pts.append((xd, lbot[r]))
                r += 1
            if ltop[rv] < Q[1]:
                pts.append((Q[0], ltop[rv]))
        else:  # reversed edge: leave downward, climb beside the boxes, enter from above
            yb = lbot[ru] + half
            xr_u = xl[u] + wl[u] + H_GAP / 2
            xr_v = xl[v] + wl[v] + H_GAP / 2
            pts.append((P[0], yb))
            pts.append((xr_u, yb))
            pts.append((xr_u, ltop[ru] - half))
            r = ru - 1
            for d in range(n + d1 - 1, n + d0 - 1, -1):
                xd = cxl[d]
                pts.append((xd, lbot[r] + half))
                pts.append((xd, ltop[r] - half))
                r -= 1
            pts.append((xr_v, ltop[rv + 1] - half))
            pts.append((xr_v, ltop[rv] - half))
            pts.append((Q[0], ltop[rv] - half))
        pts.append(Q)
        # drop interior points on a straight vertical run
        if len(pts) > 3:
            keep = [pts[0]]
            for i in range(1, len(pts) - 1):
                a, b, c = keep[-1], pts[i], pts[i + 1]
                if a[0] == b[0] == c[0]:
                    continue
                keep.append(b)
            keep.append(pts[-1])
            pts = keep
        routes[e] = pts
    return routes

"""The order in which a diff's changes are visited: A's topological order, a body's nodes
right after their owner, and for B's nodes the place of their counterpart (or of the
nearest paired node before them)."""

from __future__ import annotations

import heapq
from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from editor.document import Document

__all__ = ["b_ranks", "ranks", "scope_order"]


def scope_order(doc: Document, sid: int) -> list[int]:
    """Node ids of one scope in a topological order (list order where it already is one)."""
    scope = doc.scope(sid)
    ids = list(scope.node_ids)
    pos = {nid: k for k, nid in enumerate(ids)}
    nodes = scope.graph.node
    producers = scope.producers
    if all(pos.get(producers.get(x), -1) <= k for k, nd in enumerate(nodes) for x in nd.input if x):
        return ids  # already topological: the usual case, no sort
    indeg = {nid: 0 for nid in ids}
    succ: dict[int, list[int]] = defaultdict(list)
    for nid in ids:
        for x in set(doc.node(nid).input):
            p = scope.producers.get(x) if x else None
            if p is not None and p != nid and p in pos:
                indeg[nid] += 1
                succ[p].append(nid)
    ready = [(pos[n], n) for n in ids if indeg[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _k, n = heapq.heappop(ready)
        order.append(n)
        for m in succ[n]:
            indeg[m] -= 1
            if indeg[m] == 0:
                heapq.heappush(ready, (pos[m], m))
    if len(order) < len(ids):  # a cycle (invalid model): the rest in list order
        seen = set(order)
        order += [n for n in ids if n not in seen]
    return order


def ranks(doc: Document) -> dict[int, float]:
    """Node id -> position in the model's walk: main graph in topological order, a body's
    nodes right after their owner, then functions."""
    out: dict[int, float] = {}
    index = doc.index

    def walk(sid: int) -> None:
        for nid in scope_order(doc, sid):
            out[nid] = float(len(out))
            for child in index.children.get(nid, ()):
                walk(child)

    walk(index.main)
    for sid in index.function_scopes:
        walk(sid)
    return out


def b_ranks(db: Document, cp_b: dict[int, list[int]], rank_a: dict[int, float]) -> dict[int, float]:
    """B node -> an A rank: its counterpart's, or just after the last paired node before it."""
    out: dict[int, float] = {}
    last = -0.5
    step = 0
    for nid in ranks(db):
        partners = [rank_a[m] for m in cp_b.get(nid, ()) if m in rank_a]
        if partners:
            last, step = min(partners), 0
            out[nid] = last
        else:
            step += 1
            out[nid] = last + 0.5 - 0.5 / (step + 1)
    return out

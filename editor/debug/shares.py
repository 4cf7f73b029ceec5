"""Where a comparison's numbers went wrong, per node: the share of the error scale each node
of model A takes, for every picture of a comparison (the window's error heat map,
:mod:`widgets.numeric.heatmap`, and the web page's, :mod:`editor.webpage.overlays`).

A node's share is its worst tensor's relative error on a log scale between the tolerance
(0.05, pale) and 1000x it (1.0, deep red); nodes within tolerance get none, so a picture
shows only where numbers went wrong; the first divergence is marked.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from editor.debug.verdict import Comparison
    from editor.document import Document

__all__ = ["TITLE", "node_shares", "producer_of"]

#: what a picture of the shares is called (its legend's title)
TITLE = "Compare: error against side B"


def producer_of(doc: Document, name: str) -> tuple[int, int] | None:
    """(scope, node id) of the node in ``doc`` that produces ``name``: the main graph's,
    else the If/Loop/Scan body's (a comparison compares values inside bodies too); None."""
    main = doc.index.main
    nid = doc.producer(main, name)
    if nid is not None:
        return main, nid
    for scope in doc.index.scopes:
        if scope != main:
            nid = doc.producer(scope, name)
            if nid is not None:
                return scope, nid
    return None


def node_shares(comparison: Comparison, doc: Document) -> dict[int, tuple[float, str, bool]]:
    """Node id in ``doc`` -> (share 0..1, label, is first divergence) for nodes that differ.
    Nodes are found by the tensor they produce (names of nodes may be empty)."""
    fd = comparison.first_divergence
    atol = max(comparison.tolerance.rtol, 1e-12)
    out: dict[int, tuple[float, str, bool]] = {}
    for t in comparison.tensors:
        if t.ok is not False or t.node is None:
            continue
        found = producer_of(doc, t.a)
        if found is None:
            continue
        nid = found[1]
        e = t.error
        rel = e.max_rel if e is not None and e.max_rel is not None else math.inf
        share = 1.0 if not math.isfinite(rel) else min(1.0, max(0.05, math.log10(max(rel / atol, 1.0)) / 3.0))
        label = "NaN" if e is not None and e.nan_a + e.nan_b and (e.nan_a != e.nan_b) else f"{rel:.2g}"
        first = fd is not None and fd.a == t.a
        old = out.get(nid)
        if old is None or share > old[0] or first:
            out[nid] = (share, ("first · " if first else "") + label, first or (old[2] if old else False))
    return out

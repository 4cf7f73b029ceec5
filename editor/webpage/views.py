"""The views a web page carries: the sender's view and the ones a click on a group reaches,
each laid out ahead by the core, exactly as the window lays it out.

# NOTE: why views are computed ahead instead of laid out in the page. The window's picture
# comes from the compound layered layout (editor.layout: network-simplex ranks, median
# ordering with transposition, Brandes-Köpf coordinates, frames level by level), about 1,300
# lines of array code; a JavaScript port would draw a *different* picture wherever it
# drifts, and "the page shows what the sender saw" is the promise. So the page holds the
# core's own layouts of a bounded set of views:
#
# * the first view (the sender's open groups, or the window's first view);
# * for every group and If/Loop/Scan body: that one group opened from the first view (with
#   the groups around it), or closed when it was open. Opening a group inside an opened
#   group is again such a view, so drilling down and back up is always exact;
# * opening a second, unrelated group lands on the nearest view the page holds (that group
#   opened from the first view) and the page says so;
# * everything open and everything closed (Open All / Close All), budget allowing.
#
# Views are laid out incrementally from the first one (``previous=``), as the window does
# after a click, and added shallow groups first until a budget of boxes is spent; a toggle
# the page does not hold is drawn disabled with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from editor.layout import LayoutResult, layout_graph
from editor.viewmodel import DisplayGraph
from editor.webpage.source import ViewSource

__all__ = ["View", "ViewSet", "compute_views", "effective", "MAX_VIEW_BOXES"]

#: Boxes of every precomputed view together; past it, further toggles are not held.
MAX_VIEW_BOXES = 60_000
#: CPU seconds of layout work the page may cost before it stops adding views: a guard for
#: pathological models only (CPU, not wall time: the same model gives the same page on a
#: busy machine; the box budget is what bounds a page in practice)
MAX_VIEW_SECONDS = 300.0


@dataclass(frozen=True)
class View:
    """One expansion state (``expanded``: its canonical open paths) laid out."""

    expanded: frozenset[str]
    display: DisplayGraph
    layout: LayoutResult


@dataclass
class ViewSet:
    """The views of one page and what the page needs to move between them."""

    #: every openable path -> its openable parent ("" at the top)
    parents: dict[str, str]
    #: every openable path -> its title
    labels: dict[str, str]
    views: list[View]
    #: openable paths the page holds no view for (the budget ran out), with the reason
    missing: dict[str, str] = field(default_factory=dict)
    #: node id -> the innermost openable path around its box ("" at the top), for find
    home: dict[str, str] = field(default_factory=dict)
    #: node id -> key of the box a folded node is drawn in (a weight's preparation chain)
    host: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def effective(expanded: Iterable[str], parents: Mapping[str, str]) -> frozenset[str]:
    """The open paths that show: a path whose parent is closed changes nothing on screen
    (the window still remembers it), so two sets that differ only there are one view."""
    opened = set(expanded)

    def shows(p: str) -> bool:
        q = parents.get(p, "")
        while q:
            if q not in opened:
                return False
            q = parents.get(q, "")
        return True

    return frozenset(p for p in opened if p in parents and shows(p))


def _ancestors(path: str, parents: Mapping[str, str]) -> list[str]:
    out = []
    q = parents.get(path, "")
    while q:
        out.append(q)
        q = parents.get(q, "")
    return out


def _openable(source: ViewSource, full: DisplayGraph) -> tuple[dict[str, str], dict[str, str]]:
    """(parent, label) of every path the page can open: a name-scope group, a body's
    ``@<node>`` and the groups inside bodies; the parent is the nearest openable frame
    around it in the view with everything open (a body frame ``@12/then_branch`` is not one)."""
    paths = source.everything()
    parents: dict[str, str] = {}
    labels: dict[str, str] = {}
    for p in paths:
        if p not in full.group_parents:
            continue  # a group the display model does not draw (no box of its own)
        q = full.group_parents.get(p, "")
        while q and q not in paths:
            q = full.group_parents.get(q, "")
        parents[p] = q
        labels[p] = full.group_labels.get(p, p.rsplit("/", 1)[-1] or p)
    return parents, labels


def compute_views(source: ViewSource, expanded: Collection[str] | None, *,
                  first: tuple[DisplayGraph, LayoutResult] | None = None,
                  max_boxes: int = MAX_VIEW_BOXES, max_seconds: float = MAX_VIEW_SECONDS,
                  progress: Callable[[float, str], None] | None = None) -> ViewSet:
    """The first view (``expanded``; None: the flat view, which has nothing to open) and the
    views one click on a group reaches from it, within the budget (see module docstring).
    ``first``: the first view's display model and layout when the caller has them (the
    window's canvas), so the page starts on exactly the picture on screen. ``progress(fraction,
    message)`` is called before each view (raise from it to cancel)."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    if expanded is None:
        display, layout = first if first is not None else _laid(source, None, None)
        home, host = _homes(source, display, {})
        return ViewSet({}, {}, [View(frozenset(), display, layout)], home=home, host=host,
                       seconds=time.perf_counter() - t0)
    full = source.build(source.everything())
    parents, labels = _openable(source, full)
    start = effective(expanded, parents)
    display, layout = first if first is not None else _laid(source, start, None)
    views = [View(start, display, layout)]
    seen = {start}
    spent = len(display.boxes)
    missing: dict[str, str] = {}
    depth = {p: len(_ancestors(p, parents)) for p in parents}
    order = sorted(parents, key=lambda q: (depth[q], q))
    for k, p in enumerate(order):
        if progress is not None:
            progress(k / max(len(order), 1), f"Laying out the view with {labels[p]!r} opened ({k + 1} of {len(order)})")
        if p in start:
            target = effective(start - {p}, parents)
        else:
            target = effective(set(start) | {p, *_ancestors(p, parents)}, parents)
        if target in seen:
            continue
        if spent >= max_boxes or time.process_time() - c0 > max_seconds:
            missing[p] = "this page holds no layout for it (too big to lay out ahead); open the model in ONNX Studio"
            continue
        d, lay = _laid(source, target, layout)
        views.append(View(target, d, lay))
        seen.add(target)
        spent += len(d.boxes)
    # Open All and Close All, as the window's View menu has them, when the budget still allows
    for target in (frozenset(parents), frozenset()):
        if target in seen or not parents:
            continue
        if spent >= max_boxes or time.process_time() - c0 > max_seconds:
            break
        d, lay = _laid(source, target, layout)
        views.append(View(target, d, lay))
        seen.add(target)
        spent += len(d.boxes)
    home, host = _homes(source, full, parents)
    return ViewSet(parents, labels, views, missing, home, host, time.perf_counter() - t0)


def _homes(source: ViewSource, full: DisplayGraph, parents: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(node id -> innermost openable path around it, node id -> the box that shows a node
    without a box of its own) in the view with everything open. Without a box: a weight's
    preparation chain (folded into its consumer's weight rows), a small constant shown by
    its value on the node that reads it, shape plumbing shown as a row of its reader."""
    home: dict[str, str] = {}
    for b in full.boxes:
        if b.node_id is None:
            continue
        g = full.box_groups.get(b.key, "")
        while g and g not in parents:
            g = full.group_parents.get(g, "")
        home[str(b.node_id)] = g
    host: dict[str, str] = {}
    for key, ids in full.folded.items():
        if not key:
            continue
        for nid in ids:
            host[str(nid)] = key
    boxed = {b.key for b in full.boxes}
    scopes = [(source.graph, source.node_ids)] + [(b.graph, b.node_ids) for b in source.body_scopes()]
    readers: dict[str, list[int]] = {}
    outputs: dict[int, list[str]] = {}
    for graph, ids in scopes:
        for node, nid in zip(graph.node, ids):
            outputs[nid] = [o for o in node.output if o]
            for name in node.input:
                readers.setdefault(name, []).append(nid)

    def shown_in(nid: int, depth: int = 0) -> str | None:
        key = f"n:{nid}"
        if key in boxed:
            return key
        if str(nid) in host or depth > 8:
            return host.get(str(nid))
        for name in outputs.get(nid, ()):
            for r in readers.get(name, ()):
                k = shown_in(r, depth + 1)
                if k is not None:
                    return k
        return None

    for nid in outputs:
        if f"n:{nid}" in boxed or str(nid) in host:
            continue
        k = shown_in(nid)
        if k is not None:
            host[str(nid)] = k
    for nid, key in host.items():
        home.setdefault(nid, home.get(key[2:], "") if key.startswith("n:") else "")
    return home, host


def _laid(source: ViewSource, expanded: Collection[str] | None,
          previous: LayoutResult | None) -> tuple[DisplayGraph, LayoutResult]:
    display = source.build(expanded)
    # as the window does after a click: laid out from the picture the user knows, a tall
    # graph in columns
    return display, layout_graph(display, previous=previous, wrap=True)

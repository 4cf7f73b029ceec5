"""Overlays a page carries: box colours with a legend, as the window's heat maps draw them.

The colours are the window's (``widgets.overlays.heatmap.heat_colour``: pale yellow -> deep red
for numbers; ``widgets.canvas.overlay_export.overlay_colour``: a golden-angle hue per
label) written as CSS; the page draws them over the boxes of every view it holds, so a
box keeps its colour when a group is opened.
"""

from __future__ import annotations

import colorsys
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from editor.webpage.page import Overlay

if TYPE_CHECKING:
    from editor.document import Document
    from editor.node_data import NodeData
    from editor.viewmodel import Box

V = TypeVar("V")

__all__ = ["FIRST_DIVERGENCE", "comparison_overlay", "cost_overlay", "error_overlay", "every_box_values", "heat_css",
           "heat_overlay", "label_css", "largest", "node_data_overlay", "values_overlay"]


def heat_css(share: float) -> str:
    """Pale yellow (0) -> orange -> deep red (1), as ``heat_colour``."""
    s = max(0.0, min(1.0, share))
    return f"hsl({55.0 * (1.0 - s):.1f},95%,{(0.62 - 0.22 * s) * 100:.1f}%)"


def label_css(amount: float) -> str:
    """The hue of label number ``amount`` (1..n), as ``overlay_colour(numeric=False)``."""
    r, g, b = colorsys.hsv_to_rgb(((round(amount) - 1) * 0.618034) % 1.0, 0.7, 0.9)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def values_overlay(values: Mapping[str, float | str], *, title: str, kind: str, numeric: bool) -> Overlay:
    """Box key -> value (a number or a label) as an overlay: the colour of each box, the
    text a hover shows, and the legend (:func:`editor.node_data.legend_entries`)."""
    from editor.node_data import legend_entries, overlay_amounts

    amounts, text = overlay_amounts(values, numeric)
    peak = max(amounts.values(), default=0.0) or 1.0
    if numeric:
        def colour(a: float) -> str:
            return heat_css(math.sqrt(max(0.0, a) / peak))
    else:
        colour = label_css
    return Overlay(title=title, kind=kind, colours={k: colour(a) for k, a in amounts.items()},
                   values={k: str(values[k]) if not numeric else text(a) for k, a in amounts.items()},
                   legend=[[colour(a), t] for a, t in legend_entries(values, numeric)])


def every_box_values(values: Mapping[int, V], boxes: Iterable[Box], names: Mapping[int, str]) -> dict[str, list[V]]:
    """Box key -> the values of the nodes it shows, for every box any view of a page draws:
    a node box its node's, a closed group box those of every node inside it (by name prefix,
    as :func:`editor.node_data.by_box` assigns them in one view). Unlike one view, the page
    draws a node as its own box in one view and inside its group's box in another, so each
    node counts for both."""
    boxes = list(boxes)
    groups = {b.name.rstrip("/"): b.key for b in boxes if b.kind == "group" and b.name}
    keys = {b.key for b in boxes}
    out: dict[str, list[V]] = {}
    for nid, value in values.items():
        key = f"n:{nid}"
        if key in keys:
            out.setdefault(key, []).append(value)
        parts = names.get(nid, "").split("/")
        for i in range(len(parts) - 1, 0, -1):
            g = groups.get("/".join(parts[:i]))
            if g is not None:
                out.setdefault(g, []).append(value)
    return out


def largest(vals: list[float | str]) -> float | str:
    """What a box showing several nodes shows: the largest number, else the commonest label."""
    numbers = [v for v in vals if isinstance(v, float)]
    return max(numbers) if numbers else Counter(map(str, vals)).most_common(1)[0][0]


def node_data_overlay(doc: Document, source: str | Path | NodeData, column: str | None = None
                      ) -> Callable[[Iterable[Box]], Overlay]:
    """``render --overlay FILE``: per-node data (JSON or CSV: node name -> number or label),
    read now; returns the maker :func:`editor.webpage.document_page` calls with every box
    its views draw (a closed group takes its nodes' largest value, as in the window)."""
    from editor.node_data import NodeData, load_node_data

    # a file (render --overlay), or the data the window's Node Data Overlay already holds
    data = source if isinstance(source, NodeData) else load_node_data(source, column)
    names = {nid: node.name for _scope, nid, node in doc.index.iter_nodes()}
    matched = data.match_doc(doc)

    def make(boxes: Iterable[Box]) -> Overlay:
        values = {k: largest(v) for k, v in every_box_values(matched, boxes, names).items()}
        return values_overlay(values, title=f"{data.column} ({Path(data.source).name})", kind="data",
                              numeric=data.numeric)

    return make


def cost_overlay(doc: Document, measure: str = "macs") -> Callable[[Iterable[Box]], Overlay]:
    """The cost heat map (the Cost panel's): MACs (or ``params``, ``weight_bytes``,
    ``output_bytes``) of every main-graph node, symbolic dims at the cost model's sample
    value; a closed group shows its largest node's."""
    from editor.cost import SAMPLE_DIM, model_cost
    from editor.shapes import evaluate

    cost = model_cost(doc.model)
    ids = list(doc.main.node_ids)
    amounts: dict[int, float] = {}
    for n in cost.nodes:
        value = evaluate(getattr(n, measure), {}, SAMPLE_DIM)
        if value and n.index < len(ids):
            amounts[ids[n.index]] = float(value)
    names = {nid: doc.node(nid).name for nid in amounts}

    def make(boxes: Iterable[Box]) -> Overlay:
        values = {k: largest(v) for k, v in every_box_values(amounts, boxes, names).items()}
        return values_overlay(values, title=f"cost: {measure} (dims {SAMPLE_DIM})", kind="cost", numeric=True)

    return make


def comparison_overlay(doc: Document, comparison: Any) -> Callable[[Iterable[Box]], Overlay]:
    """The compare error heat map of an :class:`editor.debug.Comparison` over model A, as the
    window's Compare Runs draws it (:func:`editor.debug.shares.node_shares`: only nodes
    beyond tolerance, on the error scale; the first divergence marked)."""
    from editor.debug.shares import TITLE, node_shares

    shares = node_shares(comparison, doc)
    names = {nid: doc.node(nid).name for nid in shares if doc.has_node(nid)}
    return error_overlay(shares, names, title=TITLE)


def heat_overlay(amounts: Mapping[int, float], names: Mapping[int, str], *, title: str, kind: str,
                 fmt: Callable[[float], str]) -> Callable[[Iterable[Box]], Overlay]:
    """A heat map of amounts per node (the window's profile and cost heat maps): a closed
    group shows the sum of its nodes', colours on the heat scale by the square root of the
    share of the largest box, the legend at the largest, a quarter and a sixteenth of it."""

    def make(boxes: Iterable[Box]) -> Overlay:
        per_box = {k: float(sum(v)) for k, v in every_box_values(amounts, boxes, names).items()}
        peak = max(per_box.values(), default=0.0) or 1.0
        return Overlay(title=title, kind=kind,
                       colours={k: heat_css(math.sqrt(max(v, 0.0) / peak)) for k, v in per_box.items()},
                       values={k: fmt(v) for k, v in per_box.items()},
                       legend=[[heat_css(math.sqrt(f)), fmt(peak * f)] for f in (1.0, 0.25, 1 / 16)] if per_box else [])

    return make


#: the compare heat map's colour for the first divergence (the window's purple)
FIRST_DIVERGENCE = "#9600a0"


def error_overlay(shares: Mapping[int, tuple[float, str, bool]], names: Mapping[int, str], *,
                  title: str) -> Callable[[Iterable[Box]], Overlay]:
    """The compare error heat map as the window draws it: node -> (share of the error scale,
    label, first divergence); a closed group shows its worst node, the first divergence
    in purple."""

    def make(boxes: Iterable[Box]) -> Overlay:
        per_box: dict[str, tuple[float, str, bool]] = {}
        for key, cells in every_box_values(shares, boxes, names).items():
            first = [c for c in cells if c[2]]
            per_box[key] = first[0] if first else max(cells, key=lambda c: c[0])
        return Overlay(title=title, kind="compare",
                       colours={k: FIRST_DIVERGENCE if c[2] else heat_css(c[0]) for k, c in per_box.items()},
                       values={k: c[1] for k, c in per_box.items()},
                       legend=[[heat_css(1.0), "1000x the tolerance or more"], [heat_css(1 / 3), "10x the tolerance"],
                               [heat_css(0.05), "just beyond it"], [FIRST_DIVERGENCE, "first divergence"]])

    return make

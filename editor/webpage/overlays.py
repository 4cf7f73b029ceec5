"""Overlays a page carries: box colours with a legend, as the window's heat maps draw them.

The colours are the window's (``widgets.run.heatmap.heat_colour``: pale yellow -> deep red
for numbers; ``widgets.canvas.overlay_export.overlay_colour``: a golden-angle hue per
label) written as CSS; the page draws them over the boxes of every view it holds, so a
box keeps its colour when a group is opened.
"""

from __future__ import annotations

import colorsys
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from editor.webpage.page import Overlay

if TYPE_CHECKING:
    from editor.document import Document
    from editor.viewmodel import Box

__all__ = ["heat_css", "label_css", "values_overlay", "node_data_overlay"]


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


def node_data_overlay(doc: Document, path: str | Path, column: str | None = None) -> Callable[[Iterable[Box]], Overlay]:
    """``render --overlay FILE``: per-node data (JSON or CSV: node name -> number or label),
    read now; returns the maker :func:`editor.webpage.document_page` calls with every box
    its views draw (a closed group takes its nodes' largest value, as in the window)."""
    from editor.node_data import box_values, load_node_data

    data = load_node_data(path, column)
    names = {nid: node.name for _scope, nid, node in doc.index.iter_nodes()}
    matched = data.match(names)

    def make(boxes: Iterable[Box]) -> Overlay:
        every = {b.key: b.name for b in boxes}
        values = box_values(every.items(), matched, names)
        return values_overlay(values, title=f"{data.column} ({Path(data.source).name})", kind="data",
                              numeric=data.numeric)

    return make

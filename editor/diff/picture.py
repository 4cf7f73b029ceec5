"""One side of a diff as a picture draws it: the main graph laid out with the groups that
hold a change opened, and the diff status of every drawn box.

Qt-free, so that every picture of a diff colours the same boxes the same way:
``onnx-studio diff --render`` (:mod:`widgets.diffview.render`) draws it with the canvas's
painters, an HTML export with its own. A node without a box of its own (inside a closed
group, or a weight folded into the box that reads it) gives its status to the box that
shows it; a box showing several takes the strongest (:func:`editor.diff.display.strongest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from editor.diff.display import SAME, DiffDisplay, strongest

if TYPE_CHECKING:
    from editor.document import Document

__all__ = ["MAX_OPENED", "SidePicture", "side_expanded", "side_picture"]

#: groups holding a change are opened while there are at most this many changed nodes
MAX_OPENED = 400


@dataclass
class SidePicture:
    display: Any  # editor.viewmodel DisplayGraph
    layout: Any  # editor.layout LayoutResult
    statuses: dict[str, str]  # box key -> status
    node_box: dict[int, str]  # node id -> the key of the box that shows it


def side_expanded(doc: Document, display: DiffDisplay, side: str) -> set[str]:
    """The groups a picture of side ``side`` opens: the first view's, and every group that
    holds a change (while there are at most :data:`MAX_OPENED` changed nodes)."""
    from editor.viewmodel import default_expanded, group_tree

    status = display.status_a if side == "a" else display.status_b
    ids = list(doc.main.node_ids)
    tree = group_tree(doc.main.graph)
    expanded = set(default_expanded(doc.main.graph, groups=tree))
    pos = {nid: k for k, nid in enumerate(ids)}
    marked = [nid for nid in ids if status.get(nid, SAME) != SAME]
    if len(marked) <= MAX_OPENED:
        for nid in marked:
            expanded.update(tree.chain(pos[nid]))
    return expanded


def side_picture(doc: Document, display: DiffDisplay, side: str, *, wrap: bool = True) -> SidePicture:
    """Side ``side`` ("a" / "b") of ``display`` (computed on ``doc``) laid out for a picture;
    ``wrap``: a graph far taller than wide in columns, as ``render`` draws it."""
    from editor.layout import layout_graph
    from editor.node_data import innermost_group
    from editor.viewmodel import build_display_graph

    status = display.status_a if side == "a" else display.status_b
    io = display.io_a if side == "a" else display.io_b
    scope = doc.main
    graph = scope.graph
    ids = list(scope.node_ids)
    expanded = side_expanded(doc, display, side)
    drawing = build_display_graph(graph, ids, opsets=doc.opsets(), expanded=expanded)
    layout = layout_graph(drawing, wrap=wrap)
    keys = {b.key for b in drawing.boxes}
    groups = {b.name.rstrip("/"): b.key for b in drawing.boxes if b.kind == "group" and b.name}
    names = {nid: doc.node(nid).name for nid in status if doc.has_node(nid)}
    node_box: dict[int, str] = {}
    statuses: dict[str, str] = {}
    for nid, st in status.items():
        key = f"n:{nid}" if f"n:{nid}" in keys else innermost_group(groups, names.get(nid, ""))
        if key is None:
            continue
        node_box[nid] = key
        statuses[key] = strongest((statuses.get(key, SAME), st))
    for name, st in io.items():
        for key in (f"in:{name}", f"out:{name}"):
            if key in keys:
                statuses[key] = strongest((statuses.get(key, SAME), st))
    return SidePicture(drawing, layout, statuses, node_box)

"""What the boxes show (View > Boxes Show): attributes, tensor shapes, attached weights.

The display model (``editor.viewmodel``) always carries everything; :func:`apply_options`
returns a copy without what the user switched off, with box sizes recomputed by the same
text metrics the view model uses, so the layout packs the smaller boxes tightly. Node
names are drawn or not by the scene itself (``GraphScene.set_show_names``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from editor import viewmodel as vm

_MAX_LINES = getattr(vm, "MAX_LINES", 6)


@dataclass(frozen=True)
class DisplayOptions:
    attributes: bool = True
    shapes: bool = True
    initializers: bool = True

    @property
    def everything(self) -> bool:
        return self.attributes and self.shapes and self.initializers


def box_size(title: str, lines) -> tuple[float, float]:
    """Width and height of a box with ``title`` and detail ``lines`` (view model metrics)."""
    w = len(title) * vm.CHAR_W
    for k, v in list(lines)[:_MAX_LINES]:
        w = max(w, (len(k) + len(v) + 2) * vm.SMALL_CHAR_W)
    w = min(vm.MAX_W, max(vm.MIN_W, w + vm.PAD_X))
    n = min(len(lines), _MAX_LINES)
    return float(round(w)), float(vm.TITLE_H + vm.LINE_H * n + (4.0 if n else 0.0))


def apply_options(graph: vm.DisplayGraph, options: DisplayOptions) -> vm.DisplayGraph:
    if options.everything:
        return graph
    boxes = []
    for box in graph.boxes:
        if box.kind == "node":
            details = box.details if options.attributes else ()
            weights = box.weights if options.initializers else ()
        elif box.kind in ("input", "output"):
            details = box.details if options.shapes else ()
            weights = box.weights
        else:
            boxes.append(box)
            continue
        if details == box.details and weights == box.weights:
            boxes.append(box)
            continue
        w, h = box_size(box.label, tuple(details) + tuple(weights))
        boxes.append(replace(box, details=tuple(details), weights=tuple(weights), width=w, height=h))
    edges = graph.edges if options.shapes else tuple(replace(e, label="") for e in graph.edges)
    return replace(graph, boxes=tuple(boxes), edges=edges)

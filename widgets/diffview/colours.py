"""A pane's colours: the diff status of every box (the Diff dock's overlay, with graph
inputs and outputs too) and, when Compare Runs has run both models, the error heat map
of matched pairs in place of the statuses.

Both are box overlays (:mod:`widgets.overlays.box_overlay`) on the pane's own scene. The
statuses come from :class:`editor.diff.display.DiffDisplay`; the errors from an
:class:`editor.debug.Comparison`, per node of *this* side: side A's tensors by their A
names, side B's by the B names the comparison paired them with.
"""

from __future__ import annotations

import math

from editor.diff.display import SAME, strongest
from widgets.compare.overlay import CanvasDiff
from widgets.numeric.heatmap import ErrorHeatMap, node_shares

__all__ = ["PaneColours", "PaneErrors", "side_shares"]


class PaneColours(CanvasDiff):
    """Status colours over one pane's boxes, graph input/output pills included."""

    def __init__(self, tab) -> None:  # noqa: ANN001
        self._io: dict[str, str] = {}
        super().__init__(tab)

    def set_statuses(self, status: dict[int, str], io: dict[str, str]) -> None:
        self._io = dict(io)
        self.set_status(status)

    def statuses_by_key(self) -> dict[str, str]:
        out = super().statuses_by_key()
        for name, st in self._io.items():
            for key in (f"in:{name}", f"out:{name}"):
                if self.scene.item_for(key) is not None:
                    out[key] = strongest((out.get(key, SAME), st))
        return out


def side_shares(comparison, doc, side: str) -> dict[int, tuple[float, str, bool]]:  # noqa: ANN001
    """Node id in ``doc`` -> (share 0..1, label, is first divergence): A's nodes by the
    tensors they produce (the compare heat map's own rule), B's by the tensors A's were
    paired with."""
    if side == "a":
        return node_shares(comparison, doc)
    fd = comparison.first_divergence
    floor = max(comparison.tolerance.rtol, 1e-12)
    out: dict[int, tuple[float, str, bool]] = {}
    main = doc.index.main
    for t in comparison.tensors:
        if t.ok is not False or not t.b:
            continue
        nid = doc.producer(main, t.b)
        if nid is None:
            continue
        e = t.error
        rel = e.max_rel if e is not None and e.max_rel is not None else math.inf
        share = 1.0 if not math.isfinite(rel) else min(1.0, max(0.05, math.log10(max(rel / floor, 1.0)) / 3.0))
        first = fd is not None and fd.a == t.a
        label = ("first · " if first else "") + ("NaN" if not math.isfinite(rel) else f"{rel:.2g}")
        old = out.get(nid)
        if old is None or share > old[0] or first:
            out[nid] = (share, label, first or (old[2] if old else False))
    return out


class PaneErrors(ErrorHeatMap):
    """The compare heat map on one pane, for that pane's side of the comparison."""

    def __init__(self, tab, side: str) -> None:  # noqa: ANN001
        self.side = side
        super().__init__(tab)

    def set_comparison(self, comparison) -> None:  # noqa: ANN001
        self._shares = side_shares(comparison, self.tab.doc, self.side) if comparison is not None else {}
        self._rebuild()

    def cell_count(self) -> int:
        return len(self._shares)

"""The sensitivity heat map: each quantized node coloured by the error it adds.

The compare heat map's look (:class:`widgets.numeric.heatmap.ErrorOverlay`: the profile
heat map's colour scale, a label per box) over the boxes of the open, quantized model: a
node's share is its added error on a log scale from 1e-4 (pale) to 1e-1 (deep red); nodes
that add less get no cell. The most sensitive node carries the thick "first" outline.
Nodes are found by name: QDQ keeps the float model's names, QOperator and int4 rename a
node ``<name>_quant`` / ``<name>_Q4``.
"""

from __future__ import annotations

import math

from PySide6.QtGui import QColor

from editor.quantize.sensitivity import Sensitivity
from widgets.numeric.heatmap import ErrorHeatMap, heat_colour

__all__ = ["SensitivityHeatMap", "sensitivity_shares"]

LOW, HIGH = 1e-4, 1e-1
_RENAMED = ("", "_quant", "_Q4", "_Q8", "_Q2")


def sensitivity_shares(sensitivity: Sensitivity, doc) -> dict[int, tuple[float, str, bool]]:  # noqa: ANN001
    """Node id in ``doc`` -> (share 0..1, label, is the most sensitive) for nodes adding
    at least :data:`LOW`."""
    main = doc.index.main
    ids = {}
    for nid in doc.index.scopes[main].node_ids:
        ids.setdefault(doc.node(nid).name, nid)
    out: dict[int, tuple[float, str, bool]] = {}
    for k, row in enumerate(sensitivity.rows):
        if not (row.added >= LOW):
            continue
        nid = next((ids[row.node + suffix] for suffix in _RENAMED if row.node + suffix in ids), None)
        if nid is None:
            continue
        share = 1.0 if not math.isfinite(row.added) else \
            min(1.0, max(0.05, math.log10(row.added / LOW) / math.log10(HIGH / LOW)))
        label = "NaN" if not math.isfinite(row.added) else f"+{row.added:.2g}"
        out[nid] = (share, ("first · " if k == 0 else "") + label, k == 0)
    return out


class SensitivityHeatMap(ErrorHeatMap):
    """The compare heat map's overlay on one tab, its cells from a sensitivity ranking."""

    title = "Quantize: error each node adds"

    def legend(self) -> tuple[str, list[tuple[QColor, str]]]:
        return self.title, [(heat_colour(1.0), f"+{HIGH:g} or more"), (heat_colour(0.5), f"+{math.sqrt(LOW * HIGH):.1g}"),
                            (heat_colour(0.05), f"+{LOW:g}"), (QColor(150, 0, 160), "most sensitive")]

    def set_sensitivity(self, sensitivity: Sensitivity | None) -> None:
        self._shares = sensitivity_shares(sensitivity, self.tab.doc) if sensitivity is not None else {}
        self._rebuild()
        self.refresh_legend()

    def cell_count(self) -> int:
        return self.overlay.cell_count()

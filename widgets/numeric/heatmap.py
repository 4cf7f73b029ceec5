"""The error heat map: each node of A coloured by how far its output is from B's.

A box overlay (:mod:`widgets.overlays.box_overlay`) like the profile heat map
(:mod:`widgets.overlays.heatmap`), with the same colour scale: a node's share is its worst
tensor's relative error on a log scale between the tolerance (pale) and 1000x it (deep
red; :func:`editor.debug.shares.node_shares`, which the web page uses too); nodes within
tolerance get no cell, so the picture shows only where numbers went wrong. The first
divergence gets a thick outline and the label "first".
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPainter, QPen

from editor.debug import Comparison
from editor.debug.shares import TITLE, node_shares, producer_of  # noqa: F401 - this module's facade (dock, diff view)
from editor.node_data import by_box
from widgets.overlays.box_overlay import BoxOverlay, BoxOverlayItem, badge_font, group_index, paint_badge
from widgets.overlays.heatmap import heat_colour

__all__ = ["ErrorHeatMap", "ErrorOverlay", "node_shares", "producer_of"]

Z_ERRORS = 2.6  # just above the profile heat map
FIRST = QColor(150, 0, 160)  # the first divergence's outline and badge


class ErrorOverlay(BoxOverlayItem):
    """Coloured rectangles over the nodes whose outputs differ."""

    def __init__(self) -> None:
        super().__init__(Z_ERRORS)
        self._font = badge_font()

    def set_cells(self, scene, cells: dict[str, tuple[float, str, bool]]) -> None:  # noqa: ANN001
        self._place(scene, sorted(cells.items(), key=lambda kv: (kv[1][2], kv[1][0])), (-6, -18, 6, 6),
                    lambda rect, v: (rect, heat_colour(v[0]), v[1], v[2]))

    def paint(self, painter: QPainter, option, widget=None) -> None:  # noqa: ANN001
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        exposed = option.exposedRect.adjusted(-6, -18, 6, 6)
        for rect, colour, label, first in self._cells:
            if not rect.intersects(exposed):
                continue
            fill = QColor(colour)
            fill.setAlpha(90)
            painter.setBrush(fill)
            painter.setPen(QPen(FIRST if first else colour, (6.0 if first else 3.0) if lod >= 0.3 else 0.0))
            painter.drawRoundedRect(rect.adjusted(-3, -3, 3, 3), 5, 5)
            if lod >= 0.45:
                paint_badge(painter, self._font, rect, label, FIRST if first else colour)


class ErrorHeatMap(BoxOverlay):
    """Keeps an :class:`ErrorOverlay` on one tab's scene in step with its layout."""

    title = TITLE

    def __init__(self, tab) -> None:  # noqa: ANN001
        self._shares: dict[int, tuple[float, str, bool]] = {}
        super().__init__(tab, ErrorOverlay())

    @property
    def shares(self) -> dict[int, tuple[float, str, bool]]:
        """Node id -> (share of the error scale, label, first divergence): what an export carries."""
        return dict(self._shares)

    def set_comparison(self, comparison: Comparison | None) -> None:
        self._shares = node_shares(comparison, self.tab.doc) if comparison is not None else {}
        self._rebuild()
        self.refresh_legend()

    def legend(self) -> tuple[str, list[tuple[QColor, str]]]:
        return self.title, [(heat_colour(1.0), "1000x the tolerance or more"), (heat_colour(1 / 3), "10x the tolerance"),
                            (heat_colour(0.05), "just beyond it"), (FIRST, "first divergence")]

    def _rebuild(self) -> None:
        if not self._visible:
            return
        self.overlay.set_cells(self.scene, self.cells_by_key())
        self.overlay.update()

    def cells_by_key(self) -> dict[str, tuple[float, str, bool]]:
        """Scene key -> cell; a collapsed group shows its worst node."""
        items = self.scene.node_items()
        names = self.node_names(self._shares)
        out: dict[str, tuple[float, str, bool]] = {}
        for key, cell in by_box(self._shares, items, group_index(items), names):
            old = out.get(key)
            if old is None or cell[0] > old[0] or cell[2]:
                out[key] = cell if old is None or not old[2] else old
        return out

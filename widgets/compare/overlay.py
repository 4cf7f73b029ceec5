"""Diff colours over a canvas: one translucent rectangle per box, coloured by the box's status.

Like the profile heat map (:mod:`widgets.overlays.heatmap`), this is a box overlay
(:mod:`widgets.overlays.box_overlay`): an item of our own on the tab's ``GraphScene``, rebuilt when
the scene lays out again, so no canvas code changes, and taking no mouse buttons.

Colours (:data:`editor.diff.display.LEGEND`, the one palette of every diff picture): added
green, removed red, changed amber, rewritten purple; boxes that are the same are washed
out (a faint veil in the canvas background colour) so the changes stand out. A collapsed
group box takes the strongest status of the nodes inside it (removed/added over rewritten
over changed over same), found by node name prefix as the heat map does.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from editor.diff.display import ADDED, CHANGED, COLOURS, REMOVED, REWRITTEN, SAME, STATUS_RANK, strongest
from editor.node_data import by_box
from widgets.overlays.box_overlay import BoxOverlay, BoxOverlayItem, group_index

Z_DIFF = 2.4  # above the box layers (2.0), under the heat map (2.5)

STATUS_COLOURS = {status: QColor(COLOURS[status]) for status in (ADDED, REMOVED, CHANGED, REWRITTEN)}


def status_colour(status: str) -> QColor:
    return QColor(STATUS_COLOURS.get(status, QColor(128, 128, 128)))


def box_statuses(scene, status: dict[int, str], names: dict[int, str]) -> dict[str, str]:
    """Scene key -> status: node boxes directly, collapsed groups by name prefix.

    A node without a box of its own goes to the innermost collapsed group whose path
    prefixes its name (see :func:`editor.node_data.by_box`)."""
    items = scene.node_items()
    out: dict[str, str] = {}
    for key, st in by_box(status, items, group_index(items), names):
        out[key] = strongest((out.get(key, SAME), st))
    return out


class DiffOverlay(BoxOverlayItem):
    """Status rectangles over the boxes (see module docstring)."""

    def __init__(self) -> None:
        super().__init__(Z_DIFF)
        self._veil = QColor(255, 255, 255, 150)

    def set_cells(self, scene, statuses: dict[str, str], *, dark: bool = False) -> None:
        """``statuses``: scene key -> status. Boxes not in the scene are skipped."""
        # same boxes first, so a coloured border is never covered by a neighbour's veil
        self._place(scene, sorted(statuses.items(), key=lambda kv: STATUS_RANK.get(kv[1], 0)),
                    (-6, -6, 6, 6), lambda rect, st: (rect, st))
        self._veil = QColor(30, 30, 30, 150) if dark else QColor(255, 255, 255, 150)
        self.update()

    def cells(self) -> list[tuple[QRectF, str]]:
        return list(self._cells)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        exposed = option.exposedRect.adjusted(-6, -6, 6, 6)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, lod >= 0.3)
        for rect, st in self._cells:
            if not rect.intersects(exposed):
                continue
            if st == SAME:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(self._veil)
                if lod >= 0.3:
                    painter.drawRoundedRect(rect, 4, 4)
                else:
                    painter.drawRect(rect)
                continue
            colour = status_colour(st)
            fill = QColor(colour)
            fill.setAlpha(70)
            painter.setBrush(fill)
            # a cosmetic pen keeps the frame visible when zoomed far out
            pen = QPen(colour, 4.0) if lod >= 0.3 else QPen(colour, 3.0)
            pen.setCosmetic(lod < 0.3)
            painter.setPen(pen)
            painter.drawRoundedRect(rect.adjusted(-3, -3, 3, 3), 5, 5)


class CanvasDiff(BoxOverlay):
    """Keeps a :class:`DiffOverlay` on one tab's scene in step with its layout."""

    def __init__(self, tab) -> None:
        self._status: dict[int, str] = {}
        super().__init__(tab, DiffOverlay())

    title = "Diff"

    def legend(self) -> tuple[str, list[tuple[QColor, str]]]:
        return self.title, [(status_colour(ADDED), "added"), (status_colour(REMOVED), "removed"),
                            (status_colour(CHANGED), "changed")]

    @property
    def status(self) -> dict[int, str]:
        """Node id -> diff status: what an export of the overlay carries."""
        return dict(self._status)

    def set_status(self, status: dict[int, str]) -> None:
        self._status = dict(status)
        self._rebuild()

    def detach(self) -> None:
        """Remove the overlay for good (the diff was closed)."""
        self.set_visible(False)
        try:
            self.scene.graphChanged.disconnect(self._rebuild)
        except (RuntimeError, TypeError):
            pass

    def statuses_by_key(self) -> dict[str, str]:
        return box_statuses(self.scene, self._status, self.node_names(self._status))

    def _rebuild(self) -> None:
        if not self._visible:
            return
        self.overlay.set_cells(self.scene, self.statuses_by_key(), dark=self.scene.is_dark())

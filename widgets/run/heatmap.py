"""A profile heat map over the canvas: one translucent, coloured rectangle per box with time.

The canvas has no per-node overlay hook, so this is an item of our own added to the
``GraphScene``: it reads the box rectangles from the scene's node items (``scene_rect()``)
and is rebuilt when the scene lays out again (``graphChanged``). It accepts no mouse
buttons, so clicks and selection go to the canvas as before.

A box's time is its node's (``n:<id>`` keys) or, for a collapsed group (``g:<path>``), the
sum over the nodes inside it. Colours run from pale yellow to deep red on a square-root
scale of the box's share of the slowest box, so a few heavy convolutions do not wash every
other box out to the same pale colour.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

Z_HEATMAP = 2.5  # above the box layers (2.0), below nothing that takes clicks


def heat_colour(share: float, alpha: int = 255) -> QColor:
    """Pale yellow (0) -> orange -> deep red (1)."""
    s = max(0.0, min(1.0, share))
    hue = 55.0 * (1.0 - s) / 360.0
    c = QColor.fromHslF(hue, 0.95, 0.62 - 0.22 * s)
    c.setAlpha(alpha)
    return c


def fmt_us(us: float) -> str:
    if us >= 1_000_000:
        return f"{us / 1e6:.2f} s"
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.0f} µs"


def box_times(scene, node_times: dict[int, float], node_names: dict[int, str]) -> dict[str, float]:
    """Scene key -> microseconds: node boxes directly, collapsed groups by name prefix."""
    items = scene.node_items()
    out: dict[str, float] = {}
    groups = sorted(((item.box.name, key) for key, item in items.items() if key.startswith("g:")),
                    key=lambda t: -len(t[0]))
    for nid, us in node_times.items():
        key = f"n:{nid}"
        if key in items:
            out[key] = out.get(key, 0.0) + us
            continue
        name = node_names.get(nid, "")
        for path, gkey in groups:
            if path and name.startswith(path.rstrip("/") + "/"):
                out[gkey] = out.get(gkey, 0.0) + us
                break
    return out


class HeatMapOverlay(QGraphicsItem):
    """Coloured rectangles over the boxes that have a time (see module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.setZValue(Z_HEATMAP)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        self._cells: list[tuple[QRectF, QColor, str]] = []
        self._bounds = QRectF()
        self._font = QFont()
        self._font.setPointSizeF(9.0)
        self._font.setBold(True)

    def set_times(self, scene, times: dict[str, float]) -> None:
        """``times``: scene key -> microseconds. Boxes not in the scene are skipped."""
        self.prepareGeometryChange()
        cells: list[tuple[QRectF, QColor, str]] = []
        peak = max(times.values(), default=0.0) or 1.0
        bounds = QRectF()
        for key, us in sorted(times.items(), key=lambda kv: kv[1]):
            item = scene.item_for(key)
            if item is None:
                continue
            rect = item.scene_rect()
            cells.append((rect, heat_colour(math.sqrt(us / peak)), fmt_us(us)))
            bounds = bounds.united(rect.adjusted(-4, -18, 4, 4))
        self._cells = cells
        self._bounds = bounds

    def cell_count(self) -> int:
        return len(self._cells)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        exposed = option.exposedRect
        fm = QFontMetricsF(self._font)
        for rect, colour, label in self._cells:
            if not rect.intersects(exposed.adjusted(-4, -18, 4, 4)):
                continue
            fill = QColor(colour)
            fill.setAlpha(90)
            painter.setBrush(fill)
            painter.setPen(QPen(colour, 3.0 if lod >= 0.3 else 0.0))
            painter.drawRoundedRect(rect.adjusted(-2, -2, 2, 2), 5, 5)
            if lod >= 0.45:
                painter.setFont(self._font)
                w = fm.horizontalAdvance(label) + 8
                badge = QRectF(rect.right() - w + 2, rect.top() - fm.height() - 3, w, fm.height() + 2)
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                painter.drawRoundedRect(badge, 3, 3)
                painter.setPen(QColor(40, 20, 0) if colour.lightness() > 120 else QColor(255, 255, 255))
                painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)


class HeatMap:
    """Keeps a :class:`HeatMapOverlay` on one tab's scene in step with its layout."""

    def __init__(self, tab) -> None:
        self.tab = tab
        self.scene = tab.canvas.scene
        self.overlay = HeatMapOverlay()
        self._node_times: dict[int, float] = {}
        self._visible = False
        self.scene.graphChanged.connect(self._rebuild)

    def set_node_times(self, node_times: dict[int, float]) -> None:
        self._node_times = dict(node_times)
        self._rebuild()

    def set_visible(self, on: bool) -> None:
        self._visible = on
        if on and self.overlay.scene() is None:
            self.scene.addItem(self.overlay)
        elif not on and self.overlay.scene() is not None:
            self.scene.removeItem(self.overlay)
        self._rebuild()

    @property
    def visible(self) -> bool:
        return self._visible

    def _rebuild(self) -> None:
        if not self._visible:
            return
        doc = self.tab.doc
        names = {nid: doc.node(nid).name for nid in self._node_times if doc.has_node(nid)}
        self.overlay.set_times(self.scene, box_times(self.scene, self._node_times, names))
        self.overlay.update()

    def times_by_key(self) -> dict[str, float]:
        doc = self.tab.doc
        names = {nid: doc.node(nid).name for nid in self._node_times if doc.has_node(nid)}
        return box_times(self.scene, self._node_times, names)



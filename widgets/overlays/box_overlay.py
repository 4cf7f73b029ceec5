"""What the canvas overlays share: one translucent shape per box, kept in step with the layout.

The diff colours (:mod:`widgets.compare.overlay`) and the profile heat map
(:mod:`widgets.overlays.heatmap`) each paint something over some of the canvas boxes. The canvas
has no per-node overlay hook, so each is an item of our own on the tab's ``GraphScene``: it
reads box rectangles from the scene's node items (``scene_rect()``), takes no mouse buttons
(clicks and selection reach the canvas as before) and is rebuilt when the scene lays out
again (``graphChanged``). This module holds that common part; the subclasses say what a
cell carries and how it is painted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import QGraphicsItem


def group_index(items: dict[str, Any]) -> dict[str, str]:
    """Collapsed group path (trailing ``/`` dropped) -> its scene key (``g:<path>``)."""
    return {item.box.name.rstrip("/"): key for key, item in items.items()
            if key.startswith("g:") and item.box.name}


def badge_font() -> QFont:
    """The font of the labels the overlays put on boxes (a time, an error)."""
    font = QFont()
    font.setPointSizeF(9.0)
    font.setBold(True)
    return font


def paint_badge(painter: QPainter, font: QFont, rect: QRectF, label: str, fill: QColor) -> None:
    """``label`` on a rounded ``fill`` badge sitting on the top-right corner of ``rect``,
    in dark text on a light fill and white on a dark one."""
    fm = QFontMetricsF(font)
    w = fm.horizontalAdvance(label) + 8
    badge = QRectF(rect.right() - w + 2, rect.top() - fm.height() - 3, w, fm.height() + 2)
    painter.setFont(font)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(fill)
    painter.drawRoundedRect(badge, 3, 3)
    painter.setPen(QColor(40, 20, 0) if fill.lightness() > 120 else QColor(255, 255, 255))
    painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, label)


class BoxOverlayItem(QGraphicsItem):
    """A scene item holding one cell per box, ``(rect, ...)``; subclasses paint the cells."""

    def __init__(self, z: float) -> None:
        super().__init__()
        self.setZValue(z)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)
        self._cells: list[tuple] = []
        self._bounds = QRectF()

    def _place(self, scene, entries: Iterable[tuple[str, Any]], margins: tuple[float, float, float, float],
               cell: Callable[[QRectF, Any], tuple]) -> None:
        """Rebuild the cells from ``(scene key, value)`` pairs, in the order given (later ones
        paint on top); keys without a box in the scene are skipped. ``margins`` (as for
        ``QRectF.adjusted``) is how far a cell's painting reaches outside its box."""
        self.prepareGeometryChange()
        cells: list[tuple] = []
        bounds = QRectF()
        for key, value in entries:
            item = scene.item_for(key)
            if item is None:
                continue
            rect = item.scene_rect()
            cells.append(cell(rect, value))
            bounds = bounds.united(rect.adjusted(*margins))
        self._cells = cells
        self._bounds = bounds

    def boundingRect(self) -> QRectF:  # noqa: N802
        return QRectF(self._bounds)

    def cell_count(self) -> int:
        return len(self._cells)


class BoxOverlay:
    """Keeps a :class:`BoxOverlayItem` on one tab's scene in step with its layout.

    Subclasses set their values and implement :meth:`_rebuild`, which runs only while the
    overlay is shown, and :meth:`legend`. Shown and hidden through the tab's overlay layer
    (:mod:`widgets.overlays.layer`): one overlay at a time; ``on_cleared`` (set by the
    owner) hears when the layer took this one away (another was shown, Clear Overlay)."""

    #: the legend's title
    title = "Overlay"

    def __init__(self, tab, overlay: BoxOverlayItem) -> None:
        self.tab = tab
        self.scene = tab.canvas.scene
        self.overlay = overlay
        self._visible = False
        self.on_cleared: Callable[[], None] | None = None
        self.scene.graphChanged.connect(self._rebuild)

    def set_visible(self, on: bool) -> None:
        from widgets.overlays.layer import layer_for

        was = self._visible
        self._visible = on
        if on and self.overlay.scene() is None:
            self.scene.addItem(self.overlay)
        elif not on and self.overlay.scene() is not None:
            self.scene.removeItem(self.overlay)
        self._rebuild()
        layer = layer_for(self.tab, create=on)
        if layer is not None:
            if on:
                layer.shown(self)
            elif was or layer.active is self:
                layer.hidden(self)

    def cleared(self) -> None:
        """The layer took this overlay away: its owner unticks what showed it."""
        if self.on_cleared is not None:
            self.on_cleared()

    def legend(self) -> tuple[str, list[tuple[QColor, str]]]:
        """(title, [(colour, what it means)]) for the canvas's legend."""
        return self.title, []

    def refresh_legend(self) -> None:
        """The values changed: the legend says so (when this overlay is the one shown)."""
        from widgets.overlays.layer import layer_for

        layer = layer_for(self.tab, create=False)
        if layer is not None and layer.active is self:
            layer.refresh_legend()

    @property
    def visible(self) -> bool:
        return self._visible

    def node_names(self, node_ids: Iterable[int]) -> dict[int, str]:
        """Node id -> name, for the ids still in the tab's document."""
        doc = self.tab.doc
        return {nid: doc.node(nid).name for nid in node_ids if doc.has_node(nid)}

    def _rebuild(self) -> None:
        raise NotImplementedError

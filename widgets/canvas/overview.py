"""The overview: the whole graph prerendered into one image, drawn instead of the items when
zoomed far out (10k boxes of a fraction of a pixel cost as much to draw as big ones).

The image is built on first use (see ``GraphScene.set_detail``) from the whole-graph paths
of :mod:`widgets.canvas.batching`, at a scale capped by ``OVERVIEW_SIDE`` and
``OVERVIEW_PIXELS``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen, QTransform
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from widgets.canvas.items import NodeItem
from widgets.canvas.painting import SMOOTH

OVERVIEW_SIDE = 8192
OVERVIEW_PIXELS = 4_000_000  # 16 MB of ARGB


class OverviewItem(QGraphicsItem):
    """The whole graph prerendered into one image, drawn scaled when zoomed far out."""

    def __init__(self, image, target: QRectF) -> None:
        super().__init__()
        self._image = image
        self._target = QRectF(target)
        self.setZValue(1.0)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def image(self):
        return self._image

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._target

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setRenderHint(SMOOTH, True)
        painter.drawImage(self._target, self._image)


def overview_scale(rect: QRectF) -> float:
    """Pixels per scene unit of the overview image of a graph covering ``rect`` (0 when empty)."""
    if rect.isEmpty():
        return 0.0
    return min(OVERVIEW_SIDE / rect.width(), OVERVIEW_SIDE / rect.height(),
               (OVERVIEW_PIXELS / (rect.width() * rect.height())) ** 0.5)


def render_overview(rect: QRectF, edges: QPainterPath, boxes: list[tuple[QColor, QPainterPath]],
                    edge_colour: QColor) -> OverviewItem:
    """The overview item of a graph covering ``rect``: ``edges`` stroked, then ``boxes`` filled by colour."""
    s = overview_scale(rect)
    w = max(1, int(rect.width() * s) + 1)
    h = max(1, int(rect.height() * s) + 1)
    image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    if not rect.isEmpty():
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setTransform(QTransform(s, 0, 0, s, -rect.x() * s, -rect.y() * s))
        pen = QPen(edge_colour, 1.0)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.drawPath(edges)
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, path in boxes:
            painter.setBrush(colour)
            painter.drawPath(path)
        painter.end()
    return OverviewItem(image, QRectF(rect.x(), rect.y(), w / s if s else 0, h / s if s else 0))


def overview_fills(items: Iterable[NodeItem], colour: Callable[[str], QColor]) -> list[tuple[QColor, QPainterPath]]:
    """Every box as one path per category, coloured by ``colour`` (after a palette change)."""
    overview: dict[str, QPainterPath] = {}
    for item in items:
        cat = item.box.category
        p = overview.get(cat)
        if p is None:
            p = overview[cat] = QPainterPath()
        p.addRect(item.scene_rect())
    return [(colour(c), p) for c, p in sorted(overview.items())]

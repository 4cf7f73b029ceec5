"""``Minimap``: an overview of the whole graph with a draggable viewport rectangle.

The overview is painted once per graph (and per size/theme) into a pixmap from the scene's
prebuilt overview paths (one path for all edges, one per box colour), never by asking 10k
items to paint themselves; each frame only blits that pixmap and draws the rectangle.

It floats over the canvas, so it must not hide what it summarises: it is small, drawn
semi-transparent (opaque under the mouse), and the canvas (``CanvasWidget``) hides it when
the whole graph is in view, moves it to a corner free of boxes, and hides it while no
corner is free: it never covers a box.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen, QPixmap, QTransform
from PySide6.QtWidgets import QWidget

from widgets.canvas.view import GraphView

MINIMAP_WIDTH = 132
MINIMAP_HEIGHT = 160
#: the boxes under an idle minimap stay visible through it
IDLE_OPACITY = 0.72


class Minimap(QWidget):
    """Overview of ``view``'s scene; click or drag to move the view."""

    def __init__(self, view: GraphView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = view
        self._pixmap: QPixmap | None = None
        self._map = QTransform()  # scene -> minimap widget coordinates
        self._dragging = False
        self.setMouseTracking(False)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self.resize(self.sizeHint())
        self._hover = False
        view.graph_scene().graphChanged.connect(self.invalidate)
        view.viewportChanged.connect(self.update)

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(MINIMAP_WIDTH, MINIMAP_HEIGHT)

    def opacity(self) -> float:
        """How opaque it is drawn now: see-through unless the mouse is over it."""
        return 1.0 if self._hover or self._dragging else IDLE_OPACITY

    def enterEvent(self, event) -> None:  # noqa: N802
        self._hover = True
        self.update()
        super().enterEvent(event)

    def leaveEvent(self, event) -> None:  # noqa: N802
        self._hover = False
        self.update()
        super().leaveEvent(event)

    def invalidate(self) -> None:
        self._pixmap = None
        self.update()

    def resizeEvent(self, event) -> None:  # noqa: N802
        self._pixmap = None
        super().resizeEvent(event)

    def scene_to_map(self) -> QTransform:
        """Transform from scene coordinates to this widget's coordinates."""
        if self._pixmap is None:
            self._render()
        return QTransform(self._map)

    def _render(self) -> None:
        scene = self._view.graph_scene()
        dpr = self.devicePixelRatioF()
        size = self.size()
        pixmap = QPixmap(max(1, int(size.width() * dpr)), max(1, int(size.height() * dpr)))
        pixmap.setDevicePixelRatio(dpr)
        pal = scene.palette_
        pixmap.fill(pal.minimap_background)
        rect = scene.graph_rect()
        self._map = QTransform()
        if not rect.isEmpty():
            pad = 6.0
            sx = (size.width() - 2 * pad) / rect.width()
            sy = (size.height() - 2 * pad) / rect.height()
            s = min(sx, sy)
            ox = pad + (size.width() - 2 * pad - rect.width() * s) / 2.0
            oy = pad + (size.height() - 2 * pad - rect.height() * s) / 2.0
            self._map = QTransform(s, 0, 0, s, ox - rect.x() * s, oy - rect.y() * s)
            edges, boxes = scene.overview()
            p = QPainter(pixmap)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setTransform(self._map)
            frames = scene.frames()
            if frames:
                # open groups as tinted outlines: where the frames are is where you are
                from widgets.canvas.frames import frame_colours

                fill, border, _ = frame_colours(scene.style)
                fpen = QPen(border, 0.0)
                fpen.setCosmetic(True)
                p.setPen(fpen)
                p.setBrush(fill)
                for f in frames:
                    p.drawRect(f.rect())
            pen = QPen(QColor(pal.edge), 0.0)
            pen.setCosmetic(True)
            edge_colour = QColor(pal.edge)
            edge_colour.setAlpha(140)
            pen.setColor(edge_colour)
            p.setPen(pen)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawPath(edges)
            p.setPen(Qt.PenStyle.NoPen)
            for colour, path in boxes:
                p.setBrush(colour)
                p.drawPath(path)
            p.end()
        self._pixmap = pixmap

    def paintEvent(self, event) -> None:  # noqa: N802
        if self._pixmap is None:
            self._render()
        p = QPainter(self)
        p.setOpacity(self.opacity())
        p.drawPixmap(0, 0, self._pixmap)
        pal = self._view.graph_scene().palette_
        border = QColor(pal.box_border)
        p.setPen(QPen(border, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
        vis = self._map.mapRect(self._view.visible_scene_rect())
        vis = vis.intersected(QRectF(self.rect()).adjusted(1, 1, -1, -1))
        if not vis.isEmpty():
            fill = QColor(pal.minimap_viewport)
            fill.setAlpha(40)
            p.setBrush(fill)
            p.setPen(QPen(pal.minimap_viewport, 1.5))
            p.drawRect(vis)
        p.end()

    def _move_view(self, pos: QPointF) -> None:
        inverse, ok = self._map.inverted()
        if ok:
            self._view.centerOn(inverse.map(pos))

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._dragging = True
            self._move_view(event.position())
            event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._dragging:
            self._move_view(event.position())
            event.accept()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._dragging = False
            event.accept()

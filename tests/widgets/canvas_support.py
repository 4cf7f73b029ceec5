"""Helpers shared by the canvas tests (no tests here)."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from widgets.canvas import GraphScene
from tests.editor.layout_checks import kept_up_to_room  # noqa: F401 - shared with the layout tests


def render_scene(scene: GraphScene, scale: float = 1.0) -> tuple[QImage, QRectF]:
    """The whole graph drawn to an image at ``scale``, with the scene rect it shows."""
    rect = scene.graph_rect().adjusted(-10, -10, 10, 10)
    image = QImage(int(rect.width() * scale), int(rect.height() * scale), QImage.Format.Format_ARGB32)
    image.fill(scene.palette_.background)
    scene.set_detail(scale)
    p = QPainter(image)
    scene.render(p, QRectF(0, 0, image.width(), image.height()), rect)
    p.end()
    return image, rect

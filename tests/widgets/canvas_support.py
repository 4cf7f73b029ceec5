"""Helpers shared by the canvas tests (no tests here)."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from widgets.canvas import GraphScene


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


def kept_up_to_room(before: dict, after: dict) -> tuple[int, int, Counter]:
    """(boxes that kept their place up to the room an opened frame made, boxes that kept it
    exactly, the moves) over the keys of ``before`` (key -> (x, y)) also in ``after``.

    Opening a group or a body in place makes room where the box was: what lies below moves
    down by one offset, what lies right of the grown frames moves right by one offset. A
    box kept its place when its move is one of those (or none)."""
    moves = Counter((round(after[k][0] - before[k][0]), round(after[k][1] - before[k][1]))
                    for k in before if k in after)
    dx = max(((c, m[0]) for m, c in moves.items() if m[0]), default=(0, 0))[1]
    dy = max(((c, m[1]) for m, c in moves.items() if m[1]), default=(0, 0))[1]
    kept = sum(c for m, c in moves.items() if m in {(0, 0), (dx, 0), (0, dy), (dx, dy)})
    return kept, moves[(0, 0)], moves

"""Problem badges on the canvas: one scene item per tab that paints a red (error) or
amber (warning) mark on every box with a problem and on the output side of every box
whose value has one (the edge leaving it).

# NOTE: a single item for all badges, rebuilt from the validator's problem list in
# O(problems): a 10k-node model with a handful of problems pays for a handful of marks,
# never a per-box item. It lives in the scene above the canvas's own items; graph rebuilds
# (relayouts) leave it in place and it re-reads the box positions afterwards.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from editor.viewmodel.groups import scoped_name, scopes_of

ERROR_COLOUR = QColor(210, 40, 40)
WARNING_COLOUR = QColor(230, 150, 20)
RADIUS = 7.0


def _group_item(scene, node):
    """The collapsed group box a node is drawn inside, if any (outermost visible first)."""
    for path in scopes_of(scoped_name(node)):
        item = scene.item_for(f"g:{path}")
        if item is not None:
            return item
    return None


class ProblemBadges(QGraphicsItem):
    def __init__(self) -> None:
        super().__init__()
        self.setZValue(900)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.marks: list[tuple[QPointF, bool, str]] = []
        self._rect = QRectF()

    def update_marks(self, scene, doc, problems, scope_id: int) -> None:
        """Recompute the marks for the problems of the shown scope."""
        marks: dict[tuple[float, float], tuple[QPointF, bool, str]] = {}
        for p in problems:
            if p.severity not in ("error", "warning"):
                continue
            key = None
            bottom = False
            if p.node_id is not None and doc.has_node(p.node_id):
                if doc.index.node_scope.get(p.node_id) != scope_id:
                    continue
                key = f"n:{p.node_id}"
            elif p.value and p.scope_id == scope_id:
                producer = doc.producer(scope_id, p.value)
                key, bottom = (f"n:{producer}", True) if producer is not None else (f"in:{p.value}", True)
            if key is None:
                continue
            item = scene.item_for(key)
            if item is None and key.startswith("n:"):
                # the node is inside a collapsed group: the group's box carries the badge
                item = _group_item(scene, doc.node(int(key[2:])))
                bottom = False
            if item is None:
                continue
            r = item.scene_rect()
            pt = QPointF(r.center().x(), r.bottom()) if bottom else QPointF(r.right(), r.top())
            k = (pt.x(), pt.y())
            is_error = p.severity == "error"
            old = marks.get(k)
            text = p.message if old is None else old[2] + "\n" + p.message
            marks[k] = (pt, is_error or (old is not None and old[1]), text)
        self.prepareGeometryChange()
        self.marks = list(marks.values())
        if self.marks:
            xs = [m[0].x() for m in self.marks]
            ys = [m[0].y() for m in self.marks]
            self._rect = QRectF(min(xs) - RADIUS - 2, min(ys) - RADIUS - 2,
                                max(xs) - min(xs) + 2 * RADIUS + 4, max(ys) - min(ys) + 2 * RADIUS + 4)
        else:
            self._rect = QRectF()
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self._rect

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self.marks:
            return
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont()
        font.setBold(True)
        font.setPointSizeF(7.5)
        painter.setFont(font)
        for pt, is_error, _text in self.marks:
            painter.setPen(QPen(Qt.GlobalColor.white, 1.2))
            painter.setBrush(QBrush(ERROR_COLOUR if is_error else WARNING_COLOUR))
            painter.drawEllipse(pt, RADIUS, RADIUS)
            painter.drawText(QRectF(pt.x() - RADIUS, pt.y() - RADIUS, 2 * RADIUS, 2 * RADIUS),
                             Qt.AlignmentFlag.AlignCenter, "!")

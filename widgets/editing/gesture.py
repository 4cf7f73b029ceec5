"""The connect gesture: drag from a box's output side to another box's input side.

Pressing the left button in the bottom band of a box (its output ports) starts a
:class:`ConnectGesture` (the press still reaches the view, so it selects the box like any
click: a click without a drag is a plain click); it draws a temporary line (the only item
it owns), follows the mouse, and on release over another box pushes exactly one command:
``SetNodeInput`` for an existing input slot, or ``AddNodePort`` to append a new input
(variadic ops, optional inputs). Which output and which input are picked by the x position
along the box edge, the way the ports are drawn there. Esc, or a release over nothing,
cancels and removes the line; nothing changes then. Cycles and type errors are refused by
the core with a reason.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QLineF, QObject, QPointF, Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QGraphicsLineItem

from editor.commands import AddNodePort, SetNodeInput
from editor.schema import get_schema
from widgets.editing.common import run_command

#: height of the band at the bottom of a box that starts a connection, in view pixels
PORT_BAND_PX = 9
#: ... and at most this share of the box's height as drawn, so that its middle selects
PORT_BAND_SHARE = 1.0 / 3.0


def _slot(x: float, left: float, width: float, n: int) -> int:
    if n <= 1 or width <= 0:
        return 0
    return max(0, min(n - 1, int((x - left) / width * n)))


class ConnectGesture:
    """One drag from an output port; owns its line item, pushes one command at the end."""

    def __init__(self, tab, src_key: str, start: QPointF) -> None:
        self.tab = tab
        self.scene = tab.canvas.scene
        self.src_key = src_key
        self.value = self._source_value(src_key, start)
        self.line = QGraphicsLineItem(QLineF(start, start))
        pen = QPen(Qt.GlobalColor.darkCyan, 2, Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self.line.setPen(pen)
        self.line.setZValue(1000)
        self.scene.addItem(self.line)
        self.done = False

    def _source_value(self, key: str, point: QPointF) -> str | None:
        kind, _, rest = key.partition(":")
        if kind == "in":
            return rest
        if kind != "n" or not rest.isdigit():
            return None
        node = self.tab.doc.node(int(rest))
        outs = list(node.output)
        if not outs:
            return None
        rect = self.scene.item_for(key).scene_rect()
        return outs[_slot(point.x(), rect.left(), rect.width(), len(outs))] or None

    def move(self, point: QPointF) -> None:
        line = self.line.line()
        self.line.setLine(QLineF(line.p1(), point))

    def target(self, point: QPointF) -> tuple[int, int, bool] | None:
        """(node id, input index, append) the drop at ``point`` would connect."""
        key = self.scene.key_at(point)
        if key is None or not key.startswith("n:") or key == self.src_key:
            return None
        nid = int(key[2:])
        doc = self.tab.doc
        node = doc.node(nid)
        schema = get_schema(node.op_type, node.domain, doc.opset(node.domain))
        n = len(node.input)
        can_grow = schema is None or schema.max_input > n
        slots = n + (1 if can_grow else 0)
        if slots == 0:
            return None
        rect = self.scene.item_for(key).scene_rect()
        k = _slot(point.x(), rect.left(), rect.width(), slots)
        return nid, k, k >= n

    def finish(self, point: QPointF) -> bool:
        """Push the command for a drop at ``point``; True when the model changed."""
        target = self.target(point)
        self.cancel()
        if target is None or self.value is None:
            return False
        nid, k, append = target
        cmd = AddNodePort(nid, "input", self.value) if append else SetNodeInput(nid, k, self.value)
        return run_command(self.tab, self.tab.doc, cmd)

    def cancel(self) -> None:
        if not self.done:
            self.done = True
            self.scene.removeItem(self.line)


class ConnectFilter(QObject):
    """Event filter on a tab's GraphView viewport that runs connect gestures."""

    def __init__(self, tab) -> None:
        super().__init__(tab)
        self.tab = tab
        self.view = tab.canvas.view
        self.gesture: ConnectGesture | None = None
        self._cursor_set = False
        self.view.viewport().installEventFilter(self)
        self.view.installEventFilter(self)

    def port_key_at(self, pos) -> str | None:
        """Key of the box whose output band is under viewport position ``pos``."""
        scene_pt = self.view.mapToScene(pos)
        key = self.tab.canvas.scene.key_at(scene_pt)
        if key is None or not (key.startswith("n:") or key.startswith("in:")):
            return None
        rect = self.tab.canvas.scene.item_for(key).scene_rect()
        # NOTE: a fixed 9 px band covered the whole of a small box zoomed out (a 26-unit box
        # is 14 px tall at the 0.55 a model opens at): a click on its centre started a
        # connection instead of selecting it, and the next Delete removed the box selected
        # before (issue 29: 44 of 95 centre clicks missed on an OCR model). The band is
        # capped to the bottom third of the box as drawn.
        band = min(PORT_BAND_PX / max(self.view.zoom(), 1e-6), rect.height() * PORT_BAND_SHARE)
        return key if scene_pt.y() >= rect.bottom() - band else None

    def start(self, key: str, scene_pt: QPointF) -> ConnectGesture:
        self.gesture = ConnectGesture(self.tab, key, scene_pt)
        return self.gesture

    def eventFilter(self, obj, event) -> bool:  # noqa: N802
        t = event.type()
        if obj is self.view:
            if t == QEvent.Type.KeyPress and self.gesture is not None and event.key() == Qt.Key.Key_Escape:
                self.gesture.cancel()
                self.gesture = None
                return True
            return False
        if t == QEvent.Type.MouseButtonPress and event.button() == Qt.MouseButton.LeftButton \
                and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            key = self.port_key_at(event.position().toPoint())
            if key is not None:
                self.start(key, self.view.mapToScene(event.position().toPoint()))
                # the view still gets the press: a click selects what it lands on, so an
                # action never acts on the box selected before (a release without a drop
                # target cancels the gesture and changes nothing else)
                return False
        elif t == QEvent.Type.MouseMove and self.gesture is not None:
            self.gesture.move(self.view.mapToScene(event.position().toPoint()))
            return True
        elif t == QEvent.Type.MouseMove and event.buttons() == Qt.MouseButton.NoButton:
            # a cross over an output band says "drag from here to connect"
            over = self.port_key_at(event.position().toPoint()) is not None
            if over and not self._cursor_set:
                self.view.viewport().setCursor(Qt.CursorShape.CrossCursor)
                self._cursor_set = True
            elif not over and self._cursor_set:
                self.view.viewport().unsetCursor()
                self._cursor_set = False
        elif t == QEvent.Type.MouseButtonRelease and self.gesture is not None:
            gesture, self.gesture = self.gesture, None
            gesture.finish(self.view.mapToScene(event.position().toPoint()))
            return True
        return False

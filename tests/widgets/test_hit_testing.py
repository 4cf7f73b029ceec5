"""What the user sees is what a click acts on: real mouse events on the canvas viewport of
the main window select the box drawn under the cursor, at the zooms people use, on real
models; a click on nothing clears the selection (also one the canvas does not draw), so
Delete never acts on a stale one; edges take clicks and hovers a few screen pixels wide.

# NOTE: the bug these tests would have caught: the connect gesture's port band (9 screen
# pixels at the bottom of a box) swallowed the press, and a small box zoomed out is less
# than 18 px tall, so a click on its centre started a connection and left the old selection
# in place (44 of 95 centre clicks missed at 0.55 on an OCR model, 22 of 49 on magika).
"""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model
from tests.widgets.test_edit_support import SILERO, SQUEEZENET

MAGIKA = CORPUS / "real" / "magika_standard_v3_3.onnx"
ZOOMS = (0.35, 0.55, 1.0)
LEFT = Qt.MouseButton.LeftButton
NONE = Qt.KeyboardModifier.NoModifier


def click_centre(tab, key: str) -> None:
    """A real left click on the centre of box ``key`` (scrolled into view first)."""
    view = tab.canvas.view
    centre = tab.canvas.scene.item_for(key).scene_rect().center()
    view.centerOn(centre)
    QTest.mouseClick(view.viewport(), LEFT, NONE, view.mapFromScene(centre))


def empty_point(tab) -> QPoint:
    """A viewport point over empty canvas (the margin above the graph's top-left corner)."""
    view = tab.canvas.view
    spot = tab.canvas.scene.graph_rect().topLeft() - QPointF(40, 40)
    view.centerOn(spot)
    pos = view.mapFromScene(spot)
    assert tab.canvas.view.key_at(pos) is None and view.edge_at(pos) is None
    return pos


@pytest.mark.parametrize("model", [MAGIKA, SILERO], ids=lambda p: p.stem)
def test_click_on_the_centre_of_every_box_selects_it(qtbot, window, model):
    tab = open_model(qtbot, window, model)
    view, scene = tab.canvas.view, tab.canvas.scene
    keys = sorted(scene.node_items())
    for zoom in ZOOMS:
        view.set_zoom(zoom)
        missed = []
        for key in keys:
            click_centre(tab, key)
            # consecutive clicks: each must replace the box selected before it
            if scene.selected_keys() != [key] or len(tab.selection.targets) != 1:
                missed.append((key, scene.selected_keys()[:3]))
        assert not missed, (f"{model.name} at zoom {zoom}: expected every centre click to select its box, "
                            f"{len(missed)} of {len(keys)} did not (key, selection): {missed[:5]}")


def test_delete_acts_on_the_clicked_node_and_a_click_on_nothing_clears(qtbot, window):
    tab = open_model(qtbot, window, MAGIKA)
    view, scene, doc = tab.canvas.view, tab.canvas.scene, tab.doc
    window.activateWindow()
    view.set_zoom(0.55)
    boxes = sorted(k for k in scene.node_items() if k.startswith("n:"))
    first, second = boxes[0], boxes[len(boxes) // 2]
    click_centre(tab, first)
    click_centre(tab, second)  # the stale-selection case: another box was selected before
    n = len(doc.model.graph.node)
    QTest.keyClick(view, Qt.Key.Key_Delete)
    assert not doc.has_node(int(second[2:])) and doc.has_node(int(first[2:])), \
        f"expected Delete to remove the clicked {second} and keep {first}"
    assert len(doc.model.graph.node) == n - 1, f"expected one node deleted, {n - len(doc.model.graph.node)} were"
    doc.undo()
    assert doc.has_node(int(second[2:]))
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        pass  # the undo's relayout brings the box back

    # two quick clicks at one spot on two boxes (the view scrolled between them): Qt sends
    # the second press as a double-click, which must select what it lands on too
    click_centre(tab, first)
    centre = scene.item_for(second).scene_rect().center()
    view.centerOn(centre)
    pos = QPointF(view.mapFromScene(centre))
    QApplication.sendEvent(view.viewport(), QMouseEvent(QEvent.Type.MouseButtonDblClick, pos,
                                                         QPointF(view.viewport().mapToGlobal(pos.toPoint())),
                                                         LEFT, LEFT, NONE))
    assert scene.selected_keys() == [second], f"a double-click on {second} left {scene.selected_keys()} selected"
    assert tab.selection.targets, "the click selected the box"
    QTest.mouseClick(view.viewport(), LEFT, NONE, empty_point(tab))
    assert scene.selected_keys() == [] and tab.selection.targets == (), \
        f"expected nothing selected, saw {scene.selected_keys()} / {tab.selection.targets}"
    QTest.keyClick(view, Qt.Key.Key_Delete)
    assert len(doc.model.graph.node) == n, "Delete with nothing selected deletes nothing"
    # a selection the boxes do not show (a value picked in a panel) is cleared as well
    from widgets.common.selection import Target

    name = doc.model.graph.node[0].output[0]
    tab.selection.select([Target.of_value(doc.index.main, name)], "test")
    QTest.mouseClick(view.viewport(), LEFT, NONE, empty_point(tab))
    assert tab.selection.targets == (), f"expected the value selection cleared, saw {tab.selection.targets}"


def _lone_segment(scene, zoom: float):
    """An edge, the middle of one of its route segments and a unit normal there, such that
    3 screen pixels either side only this edge is near, and 12 pixels along the normal
    nothing is (no box, no edge within the hit tolerance)."""
    px = 1.0 / zoom
    for edge, route, _ in scene.edge_geometry().routed:
        for a, b in zip(route, route[1:]):
            length = math.dist(a, b)
            if length * zoom < 20:
                continue
            mid = QPointF((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
            for sign in (1, -1):
                normal = QPointF(-(b[1] - a[1]) / length * sign, (b[0] - a[0]) / length * sign)
                near = [mid + normal * (s * 3 * px) for s in (-1, 1)] + [mid]
                far = mid + normal * (12 * px)
                if all(scene.key_at(p) is None and scene.edge_at(p, 5 * px) in (None, edge) for p in near) \
                        and scene.key_at(far) is None and scene.edge_at(far, 5 * px) is None:
                    return edge, mid, normal
    raise AssertionError("no edge with room around it")


def test_edges_take_hover_and_click_a_few_screen_pixels_away(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    view, scene = tab.canvas.view, tab.canvas.scene
    for zoom in (0.35, 1.0):
        view.set_zoom(zoom)
        edge, mid, normal = _lone_segment(scene, zoom)
        view.centerOn(mid)
        centre = view.mapFromScene(mid)
        off = QPoint(round(centre.x() + normal.x() * 3), round(centre.y() + normal.y() * 3))
        QTest.mouseMove(view.viewport(), off)
        assert scene.hovered_value() == edge.value, \
            f"zoom {zoom}: expected hovering 3 px off the edge to light up {edge.value!r}, saw {scene.hovered_value()!r}"
        QTest.mouseClick(view.viewport(), LEFT, NONE, off)
        assert scene.selected_value() == edge.value and tab.selection.targets[0].name == edge.value, \
            f"zoom {zoom}: expected a click 3 px off the edge to select {edge.value!r}"
        far = QPoint(round(centre.x() + normal.x() * 12), round(centre.y() + normal.y() * 12))
        QTest.mouseMove(view.viewport(), far)
        assert scene.hovered_value() is None, f"zoom {zoom}: 12 px away is no longer on the edge"

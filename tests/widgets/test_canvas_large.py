"""Canvas on a 2,000-box graph: level-of-detail modes, selection and hit tests while zoomed out."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

pytest.importorskip("PySide6")

import widgets.canvas  # noqa: E402,F401 - None guard first
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402

from editor.layout import layout_graph  # noqa: E402
from editor.viewmodel import build_display_graph  # noqa: E402
from widgets.canvas.scene import REMOVE_LAYER_MIN_BOXES, GraphScene  # noqa: E402
from widgets.canvas.style import BATCH_LOD  # noqa: E402
from widgets.canvas.view import GraphView  # noqa: E402


def _ladder(blocks: int):
    """``blocks`` residual blocks of 4 nodes, plus a mask broadcast to every block."""
    nodes = []
    x = "x"
    for i in range(blocks):
        p = f"/m/b{i}"
        nodes += [
            helper.make_node("Relu", [x], [f"{p}/r"], name=f"{p}/Relu"),
            helper.make_node("Mul", [f"{p}/r", "mask"], [f"{p}/m"], name=f"{p}/Mul"),
            helper.make_node("Sigmoid", [f"{p}/m"], [f"{p}/s"], name=f"{p}/Sigmoid"),
            helper.make_node("Add", [x, f"{p}/s"], [f"{p}/o"], name=f"{p}/Add"),
        ]
        x = f"{p}/o"
    graph = helper.make_graph(
        nodes, "ladder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def big():
    model = _ladder(500)
    g = model.graph
    display = build_display_graph(g, list(range(len(g.node))), opsets={"": 17}, expanded=None)
    return display, layout_graph(display)


def _view(qtbot, big):
    display, result = big
    scene = GraphScene()
    scene.set_graph(display, result)
    view = GraphView(scene)
    qtbot.addWidget(view)
    view.resize(900, 700)
    view.show()
    qtbot.waitExposed(view)
    return scene, view


def test_modes_follow_the_zoom(qtbot, big):
    scene, view = _view(qtbot, big)
    assert len(scene.node_items()) >= REMOVE_LAYER_MIN_BOXES
    view.set_zoom(1.0)
    assert scene.mode == "full"
    # zoomed out to see the whole graph (the wheel; Zoom to Fit stops at a readable zoom)
    view.set_zoom(view.fit_scale(scene.graph_rect()))
    assert view.zoom() < BATCH_LOD
    assert scene.mode in ("batch", "overview")
    # zoomed-out frames draw (something other than background) without box items
    image = QImage(view.viewport().size(), QImage.Format.Format_ARGB32)
    p = QPainter(image)
    view.viewport().render(p, QPoint())
    p.end()
    bg = scene.palette_.background.rgb()
    assert any(image.pixel(x, y) != bg for x in range(image.width()) for y in range(0, image.height(), 3)), (
        scene.graph_rect(), view.zoom(), scene.mode)
    view.set_zoom(1.0)
    assert scene.mode == "full"


def test_click_selects_while_zoomed_out(qtbot, big):
    scene, view = _view(qtbot, big)
    view.set_zoom(BATCH_LOD / 2)
    assert scene.batch_mode
    key = next(k for k, it in scene.node_items().items() if it.box.label == "Sigmoid")
    view.center_on(key)
    pos = view.mapFromScene(scene.item_for(key).scene_rect().center())
    with qtbot.waitSignal(view.selectionChangedKeys) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == [[key]]
    assert scene.neighbour_keys()  # producer and consumer lit up
    # the selection survives a zoom back into full detail
    view.set_zoom(1.0)
    assert scene.selected_keys() == [key]
    assert scene.item_for(key).is_marked_selected()


def test_broadcast_edges_are_references(big):
    display, result = big
    mask_edges = [e for e in display.edges if e.src == "in:mask"]
    assert len(mask_edges) == 500
    # the layout draws most of a 500-way broadcast as reference stubs, and the scene accepts them
    assert result.references & {e.key for e in mask_edges}

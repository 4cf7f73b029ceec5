"""Views land where the user looks (issue 15), driven through the window with keys and clicks.

- Zoom to Fit (the canvas's F key) never goes below a readable zoom: a 3,600-node model
  shows its inputs readably, and so does its first view;
- double-clicking an If box opens its bodies in place and the view goes to them; the
  breadcrumb names the node and the branch, never an internal ``@<id>`` key;
- after undo, the view shows the restored boxes;
- a Find query stays with the tab it was typed for: a new tab opens at its inputs;
- the minimap is small, see-through, hidden while the graph fits, off a View toggle that
  is remembered.

Each test saves a screenshot (``shot``) under ``$ONNX_STUDIO_SHOTS`` when that is set.
"""

from __future__ import annotations

import os
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

SILERO = CORPUS / "real" / "silero_vad_16k_op15.onnx"
IRIS = CORPUS / "real" / "ort_logreg_iris.onnx"


def shot(widget, name: str, tmp_path: Path) -> Path:
    """Save what the user sees; under $ONNX_STUDIO_SHOTS to look at, else in tmp_path."""
    folder = Path(os.environ.get("ONNX_STUDIO_SHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    assert widget.grab().save(str(path))
    return path


def long_chain(path: Path, blocks: int = 900) -> Path:
    """A 3,600-node model with no name scopes: nothing collapses, the graph is very tall."""
    nodes, x = [], "x"
    for i in range(blocks):
        nodes += [
            helper.make_node("Relu", [x], [f"r{i}"], name=f"Relu_{i}"),
            helper.make_node("Mul", [f"r{i}", "mask"], [f"m{i}"], name=f"Mul_{i}"),
            helper.make_node("Sigmoid", [f"m{i}"], [f"s{i}"], name=f"Sigmoid_{i}"),
            helper.make_node("Add", [x, f"s{i}"], [f"o{i}"], name=f"Add_{i}"),
        ]
        x = f"o{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
                                               helper.make_tensor_value_info("mask", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def visible(tab, key: str) -> bool:
    item = tab.canvas.scene.item_for(key)
    return item is not None and tab.canvas.view.visible_scene_rect().intersects(item.scene_rect())


@pytest.mark.timeout(180)
def test_fit_on_a_huge_model_stays_readable_and_shows_the_inputs(qtbot, window, tmp_path):
    from widgets.canvas.view import FIT_MIN_ZOOM
    from widgets.window.document_tab import READABLE_ZOOM

    window.resize(1600, 1000)
    tab = open_model(qtbot, window, long_chain(tmp_path / "chain.onnx"))
    view = tab.canvas.view
    assert len(tab.doc.main.node_ids) == 3600
    # the first view: readable, at the inputs (what Netron shows first)
    assert view.zoom() >= READABLE_ZOOM - 1e-6
    assert visible(tab, "in:x") and visible(tab, "in:mask")
    # every part opened: 3,600 boxes, a graph hundreds of screens tall
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=120_000):
        tab.canvas.controller.set_source(tab._graph, list(tab.doc.main.node_ids), opsets=tab.doc.opsets(),
                                         expanded=None)
    assert len([k for k in tab.canvas.scene.node_items() if k.startswith("n:")]) == 3600
    # (set in columns, as the window sets a graph far taller than wide: still far too big
    # to read whole)
    assert view.fit_scale(tab.canvas.scene.graph_rect()) < FIT_MIN_ZOOM / 4
    # pan away, then the user presses F (Zoom to Fit) on the canvas: the whole graph
    view.centerOn(tab.canvas.scene.graph_rect().bottomRight())
    assert not visible(tab, "in:x")
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_F)
    assert view.visible_scene_rect().contains(tab.canvas.scene.graph_rect()), (
        f"Fit shows {view.visible_scene_rect()}, not the whole graph {tab.canvas.scene.graph_rect()}")
    # R (Zoom to Readable): the inputs at a zoom where text is drawn
    view.centerOn(tab.canvas.scene.graph_rect().bottomRight())
    QTest.keyClick(view, Qt.Key.Key_R)
    assert view.zoom() >= FIT_MIN_ZOOM - 1e-6, f"Zoom to Readable went below a readable zoom: {view.zoom()}"
    assert visible(tab, "in:x")
    # the minimap gives the overview instead, in a corner free of boxes (it never hides
    # boxes: set in columns, the graph fills the window's width at a readable zoom, and
    # leaves the sides free a little further out, where it still does not fit)
    view.set_zoom(FIT_MIN_ZOOM / 2)
    assert not view.visible_scene_rect().contains(tab.canvas.scene.graph_rect())
    qtbot.waitUntil(tab.canvas.minimap.isVisible, timeout=5000)
    shot(window, "fit_huge_model", tmp_path)
    # a graph that fits readably is still fitted whole
    small = open_model(qtbot, window, IRIS)
    small.canvas.view.setFocus()
    QTest.keyClick(small.canvas.view, Qt.Key.Key_F)
    assert small.canvas.view.visible_scene_rect().contains(small.canvas.scene.graph_rect())


def _first_if(doc) -> int:
    main = doc.scope(doc.index.main)
    return next(nid for nid, n in zip(main.node_ids, main.graph.node) if n.op_type == "If")


@pytest.mark.timeout(120)
def test_double_click_opens_a_body_in_view_and_the_breadcrumb_names_it(qtbot, window, tmp_path):
    tab = open_model(qtbot, window, SILERO)
    doc, scene, view = tab.doc, tab.canvas.scene, tab.canvas.view
    nid = _first_if(doc)
    node = doc.node(nid)
    main = doc.scope(doc.index.main)
    # make the If box visible (its name groups open), at a close zoom
    paths = list(tab._tree().chain(main.position(nid)))
    if set(paths) - (tab.canvas.controller.expanded() or set()):
        with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
            tab.canvas.controller.expand_paths(paths)
    view.set_zoom(1.5)
    view.center_on(f"n:{nid}")
    item = scene.item_for(f"n:{nid}")
    pos = view.mapFromScene(item.scene_rect().center())
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        QTest.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos)
    frame = next(f for f in scene.frames() if f.path == f"@{nid}")
    shown = view.visible_scene_rect()
    # the view is on the opened body: most of what is on screen is the body's frame
    overlap = shown.intersected(frame.rect())
    assert overlap.width() * overlap.height() >= 0.5 * min(shown.width() * shown.height(),
                                                           frame.rect().width() * frame.rect().height())
    # click a box inside the body: the breadcrumb names the node and the branch
    inner = next(k for k in scene.node_items() if scene.item_for(k).box.node_id is not None
                 and doc.index.node_scope.get(scene.item_for(k).box.node_id) != doc.index.main
                 and shown.contains(scene.item_for(k).scene_rect().center()))
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     view.mapFromScene(scene.item_for(inner).scene_rect().center()))
    segments = tab.canvas.breadcrumb.segments()
    owner_label = node.name.rstrip("/").rsplit("/", 1)[-1] or node.op_type
    assert owner_label in segments
    assert any(s in ("then_branch", "else_branch") for s in segments)
    assert not any(s.startswith("@") for s in segments), segments
    shot(window, "body_in_place", tmp_path)


@pytest.mark.timeout(120)
def test_undo_brings_the_view_back_to_the_restored_boxes(qtbot, window, tmp_path):
    from tests.widgets.test_edit_support import install, open_copy

    install(window, tmp_path)
    tab = open_copy(qtbot, window, CORPUS / "real" / "magika_standard_v3_3.onnx", tmp_path)
    doc, scene, view = tab.doc, tab.canvas.scene, tab.canvas.view
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        tab.canvas.controller.expand_paths(sorted(tab._tree().parent))
    # a large edit near the bottom of the graph: delete the 20 lowest boxes
    boxes = sorted((k for k in scene.node_items() if k.startswith("n:")),
                   key=lambda k: scene.item_for(k).scene_rect().top())
    doomed = boxes[-20:]
    view.select_keys(doomed)
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        window.registry.action("node.delete").trigger()
    # the user scrolls to the top, far from there, and undoes
    view.set_zoom(1.5)
    view.centerOn(scene.graph_rect().center().x(), scene.graph_rect().top())
    assert not any(visible(tab, k) for k in doomed if scene.item_for(k) is not None)
    view.setFocus()
    with qtbot.waitSignal(tab.canvas.controller.laidOut, timeout=30_000):
        window.registry.action("edit.undo").trigger()
    assert all(scene.item_for(k) is not None for k in doomed)
    assert any(visible(tab, k) for k in doomed), "the view stayed away from the restored boxes"
    shot(window, "after_undo", tmp_path)


@pytest.mark.timeout(120)
def test_find_query_belongs_to_its_tab_and_a_new_tab_opens_at_its_inputs(qtbot, window, tmp_path):
    from resources import sample_model_path

    first = open_model(qtbot, window, sample_model_path())
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(window.find_panel.query, "Conv")
    QTest.keyClick(window.find_panel.query, Qt.Key.Key_Return)
    assert window.find_panel.matches
    qtbot.waitUntil(lambda: bool(first.canvas.scene.selected_keys()), timeout=30_000)
    second = open_model(qtbot, window, SILERO)
    qtbot.wait(300)  # longer than Find's typing pause: nothing runs on the new tab
    assert window.find_panel.query.text() == ""
    assert not second.canvas.scene.selected_keys()
    assert visible(second, "in:input")
    shot(window, "find_new_tab", tmp_path)
    # back on the first tab: its own query and matches are there again
    window.tabs.setCurrentWidget(first)
    assert window.find_panel.query.text() == "Conv"
    assert window.find_panel.matches


@pytest.mark.timeout(120)
def test_minimap_small_see_through_hidden_when_the_graph_fits_and_toggled_from_view(qtbot, window, tmp_path):
    from widgets.canvas.minimap import IDLE_OPACITY
    from widgets.settings.store import Settings

    window.resize(1280, 800)
    small = open_model(qtbot, window, IRIS)
    assert not small.canvas.minimap.isVisible(), "the minimap shows over a graph that fits"
    tab = open_model(qtbot, window, SILERO)
    minimap, view = tab.canvas.minimap, tab.canvas.view
    assert minimap.isVisible()
    assert minimap.width() * minimap.height() <= 0.1 * view.viewport().width() * view.viewport().height()
    assert minimap.opacity() == IDLE_OPACITY < 1.0
    # it sits where it hides no box when any corner is free
    free = [r for r in tab.canvas._corner_rects() if not tab.canvas._covered(r)]
    if free:
        assert tab.canvas._covered(minimap.geometry()) == 0
    shot(window, "minimap", tmp_path)
    # View > Minimap off: hidden in every tab, and remembered
    action = window.registry.action("view.minimap")
    assert action in window.registry.menu("View").actions()
    action.trigger()
    assert not minimap.isVisible()
    assert Settings().view_option("show_minimap") is False
    third = open_model(qtbot, window, CORPUS / "real" / "magika_standard_v3_3.onnx")
    assert not third.canvas.minimap.isVisible()
    action.trigger()
    assert Settings().view_option("show_minimap") is True

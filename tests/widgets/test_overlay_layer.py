"""Overlays as one managed layer per tab (issue 29): the compare error heat map stayed after
its dock closed and mixed with the diff colours, the cost heat map and the profile badges
showed at once, Clear Node Data cleared only node data, the Cost dims field kept the
previous model's text. Now one overlay shows at a time with its legend, View ▸ Clear
Overlay removes whatever shows, closing the source dock clears its overlay, and each tab
keeps its own Cost dims."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QApplication, QLabel

from tests.conftest import CORPUS
from tests.widgets.conftest import open_model

SQUEEZENET = CORPUS / "onnx-backend" / "light" / "light_squeezenet.onnx"
VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def _items(tab):
    """The overlay items on the tab's scene (each BoxOverlay adds one)."""
    from widgets.overlays.box_overlay import BoxOverlayItem

    return [i for i in tab.canvas.scene.items() if isinstance(i, BoxOverlayItem)]


def test_one_overlay_at_a_time_with_its_legend_and_one_action_clears_it(qtbot, window, tmp_path):
    tab = open_model(qtbot, window, SQUEEZENET)
    names = [n.name for n in tab.doc.model.graph.node if n.name][:6]
    data = tmp_path / "scores.json"
    data.write_text(json.dumps({n: float(k) for k, n in enumerate(names)}))
    node_data = window.show_node_data(tab, str(data))
    layer = tab.overlay_layer
    assert layer.active is node_data and len(_items(tab)) == 1
    legend = layer.legend
    assert legend.isVisibleTo(tab.canvas) and legend.title.text() == "Node data: value" and legend.entries
    # the cost heat map: it replaces the node data (one overlay, one legend)
    window.cost_dock.show()
    window.cost_dock.raise_()
    cost = window.cost
    qtbot.waitUntil(lambda: cost.cost is not None, timeout=30_000)
    cost.heat.setChecked(True)
    assert layer.active is cost.heatmap and len(_items(tab)) == 1, _items(tab)
    assert legend.title.text().startswith("Cost: ") and not node_data.visible
    # View ▸ Clear Overlay: nothing shown, the checkbox that showed it unticked
    action = window.registry.action("view.clear_overlay")
    window.registry.refresh()
    assert action.isEnabled()
    action.trigger()
    assert layer.active is None and _items(tab) == [] and not legend.isVisibleTo(tab.canvas)
    assert not cost.heat.isChecked()
    window.registry.refresh()
    assert not action.isEnabled()
    # the legend's × clears too
    cost.heat.setChecked(True)
    assert layer.active is cost.heatmap
    legend.close_button.click()
    assert layer.active is None and not cost.heat.isChecked()


def test_closing_the_source_dock_clears_its_overlay(qtbot, window):
    tab = open_model(qtbot, window, SQUEEZENET)
    window.cost_dock.show()
    window.cost_dock.raise_()
    qtbot.waitUntil(lambda: window.cost.cost is not None, timeout=30_000)
    window.cost.heat.setChecked(True)
    assert tab.overlay_layer.active is window.cost.heatmap
    window.cost_dock.toggleViewAction().trigger()  # View ▸ Panels ▸ Cost off
    assert window.cost_dock.isHidden()
    assert tab.overlay_layer.active is None and _items(tab) == []
    # focus mode hides docks but closes nothing: an overlay stays
    window.cost_dock.show()
    window.cost.heat.setChecked(True)
    focus = window.registry.action("view.focus_canvas")
    focus.trigger()
    assert tab.overlay_layer.active is window.cost.heatmap, "focus mode must not clear the overlay"
    focus.trigger()


def test_each_tab_keeps_its_own_cost_dims(qtbot, window):
    a = open_model(qtbot, window, SQUEEZENET)
    window.cost.dims_edit.setText("batch=4")
    b = open_model(qtbot, window, VAD)
    assert window.current_tab() is b
    assert window.cost.dims_edit.text() == "", f"the new model got {window.cost.dims_edit.text()!r}"
    window.cost.dims_edit.setText("seq_len=8")
    window.tabs.setCurrentWidget(a)
    QApplication.processEvents()
    assert window.cost.dims_edit.text() == "batch=4"
    window.tabs.setCurrentWidget(b)
    assert window.cost.dims_edit.text() == "seq_len=8"


@pytest.mark.timeout(120)
def test_an_onnxruntime_profile_colours_the_graph(qtbot, window, tmp_path):
    """View ▸ Node Data Overlay with the profile onnxruntime wrote on the target device."""
    import numpy as np
    import onnxruntime as ort

    tab = open_model(qtbot, window, SQUEEZENET)
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "profile")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(SQUEEZENET), options, providers=["CPUExecutionProvider"])
    session.run(None, {session.get_inputs()[0].name: np.zeros((1, 3, 224, 224), np.float32)})
    profile = session.end_profiling()
    overlay = window.show_node_data(tab, profile)
    assert overlay is not None and overlay.data.column == "kernel time (onnxruntime profile)"
    # every node ran, the 39 unnamed ones (of 105) included: onnxruntime names them <op>_<index>
    nodes = len(tab.doc.model.graph.node)
    assert len(overlay.values) == nodes and not overlay.data.unmatched, \
        f"{len(overlay.values)} of {nodes} nodes coloured; unmatched {overlay.data.unmatched[:5]}"
    legend = tab.overlay_layer.legend
    assert legend.title.text() == "Node data: kernel time (onnxruntime profile)"
    assert all(text.endswith(("µs", "ms", " s")) for _colour, text in legend.entries), legend.entries
    # the legend is laid out: a row per entry below the title, none squeezed over another,
    # also when its entries change while it shows (the heat maps refresh it with new values)
    overlay.refresh_legend()
    QApplication.processEvents()
    grid = legend.layout()
    rows = [w for w in (grid.itemAt(i).widget() for i in range(grid.count()))
            if isinstance(w, QLabel) and w is not legend.title and w.text()]
    assert len(rows) == len(legend.entries) and legend.height() >= legend.sizeHint().height(), \
        (legend.height(), legend.sizeHint())
    tops = sorted(w.geometry().top() for w in rows)
    assert all(b - a >= w.fontMetrics().height() - 2 for a, b, w in zip(tops, tops[1:], rows)), tops


def test_the_legend_leaves_a_corner_with_boxes_under_it_and_the_minimap_keeps_clear(qtbot, window, tmp_path):
    tab = open_model(qtbot, window, SQUEEZENET)
    names = [n.name for n in tab.doc.model.graph.node if n.name][:6]
    data = tmp_path / "scores.json"
    data.write_text(json.dumps({n: float(k) for k, n in enumerate(names)}))
    window.show_node_data(tab, str(data))
    canvas, legend = tab.canvas, tab.overlay_layer.legend
    vp = canvas.view.viewport().geometry()
    top_left = legend.pos()
    assert (top_left.x() - vp.left(), top_left.y() - vp.top()) == (12, 12), top_left
    # boxes under the top-left corner and none under the others (whatever the graph: in
    # columns SqueezeNet has boxes in every corner): the legend goes to the top right
    covered = {(top_left.x(), top_left.y())}
    canvas._covered = lambda rect: 1 if (rect.x(), rect.y()) in covered else 0
    canvas._place_minimap()
    moved = legend.geometry()
    (top_right,) = canvas._corners(moved.width(), moved.height(), "tr")
    assert moved == top_right, (moved, top_right)
    # it stays there while that corner is free (no hopping back), and the minimap never covers it
    covered.clear()
    canvas._place_minimap()
    assert legend.geometry() == moved
    spots = canvas._corner_rects()
    assert len(spots) == 3 and not any(c.intersects(moved) for c in spots), (spots, moved)

"""The Compare Runs dock (widgets/numeric): two runs of a real model compared in the
background, the sortable table, the error heat map on the canvas with the first divergence
selected and centred, the side-by-side detail, cancel, and reduce opening a new tab."""

from __future__ import annotations

import os

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.conftest import CORPUS
from tests.widgets.conftest import LOAD_TIMEOUT_MS, open_model

VAD = CORPUS / "real" / "fw_silero_vad_v6.onnx"


def _changed(path, name, change):  # noqa: ANN001, ANN202
    model = onnx.load(VAD)
    for t in model.graph.initializer:
        if t.name == name:
            w = numpy_helper.to_array(t).copy()
            change(w)
            t.CopyFrom(numpy_helper.from_array(w, name))
    onnx.save(model, path)
    return path


@pytest.fixture
def dock(window):
    return window.numeric_dock


def _wait(qtbot, dock) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: not dock.busy, timeout=LOAD_TIMEOUT_MS)


@pytest.mark.timeout(120)
def test_compare_with_a_perturbed_copy_shows_the_first_divergence(qtbot, window, dock, tmp_path) -> None:  # noqa: ANN001
    b = _changed(tmp_path / "b.onnx", "encoder.conv_layers.2.weight", lambda w: w.__iadd__(np.float32(0.3)))
    tab = open_model(qtbot, window, VAD)
    window.registry.action("tools.compare_runs").trigger()
    assert dock.isVisible()
    dock._b_file = str(b)
    dock.refresh_sides()
    dock.model_b.setCurrentIndex(dock.model_b.findData(str(b)))
    dock.backend_b.setCurrentIndex(dock.backend_b.findData("ort"))
    dock.dims.setText("seq_len=4")
    dock.run_comparison()
    assert dock.busy and dock.progress.isVisible()
    _wait(qtbot, dock)
    c = dock.comparison
    assert c is not None, dock.status.text()
    assert c.first_divergence.node == "/encoder/conv_layers.2/Conv"
    assert dock.model.rowCount() == len(c.tensors)
    # the first divergence is the selected row, and its node the canvas selection
    current = dock.table.currentIndex()
    assert dock.proxy.data(current.siblingAtColumn(1)).startswith("/encoder/conv_layers.2/Conv_output_0")
    nid = tab.doc.producer(tab.doc.index.main, "/encoder/conv_layers.2/Conv_output_0")
    qtbot.waitUntil(lambda: tab.selection.current is not None and tab.selection.current.node == nid)
    # heat map: one cell per differing node box on the canvas, the first one outlined
    heat = dock.heatmap
    assert heat is not None and heat.visible and heat.overlay.cell_count() > 0
    cells = heat.cells_by_key()
    assert cells[f"n:{nid}"][2] is True
    assert all(share <= 1.0 for share, _, _ in cells.values())
    # sorting by max abs puts the worst first
    dock.table.sortByColumn(4, dock.table.horizontalHeader().sortIndicatorOrder().DescendingOrder)
    top = dock.model.row(int(dock.proxy.data(dock.proxy.index(0, 0), dock.proxy.sortRole() + 1)))
    worst = max((t for t in c.tensors if t.error and t.error.max_abs is not None), key=lambda t: t.error.max_abs)
    assert top.error.max_abs == worst.error.max_abs
    # the detail shows both sides and a histogram of the difference
    assert "A" in dock.detail.side_a.text() and dock.detail.histogram.counts.sum() > 0
    if os.environ.get("ONNX_STUDIO_SHOTS"):
        window.grab().save(os.path.join(os.environ["ONNX_STUDIO_SHOTS"], "numeric_dock.png"))
    dock.show_heat.setChecked(False)
    assert not heat.visible


@pytest.mark.timeout(120)
def test_reduce_a_planted_nan_opens_the_small_model_in_a_new_tab(qtbot, window, dock, tmp_path) -> None:  # noqa: ANN001
    bad = _changed(tmp_path / "nan.onnx", "decoder.conv1d.weight", lambda w: w.flat.__setitem__(2, np.nan))
    open_model(qtbot, window, bad)
    before = window.tabs.count()
    dock.dims.setText("seq_len=4")
    dock.check_kind.setCurrentIndex(dock.check_kind.findData("nan"))
    dock.reduce()
    _wait(qtbot, dock)
    result = dock.last_reduction
    assert result is not None, dock.status.text()
    assert len(result.nodes) <= 3
    qtbot.waitUntil(lambda: window.tabs.count() == before + 1, timeout=LOAD_TIMEOUT_MS)
    new_tab = window.current_tab()
    assert len(new_tab.doc.model.graph.node) == len(result.model.graph.node) <= 3
    # its Run dock feeds the inputs that reproduce the NaN (issue 29: saved inputs)
    panel = window.run_dock.controller_for(new_tab).input_panel
    feeds = panel.feeds()
    assert set(feeds) == set(result.inputs) and all(
        np.array_equal(feeds[k], result.inputs[k], equal_nan=True) for k in feeds), "the reduced tab must run on its saved inputs"


def test_cancel_leaves_the_dock_usable(qtbot, window, dock) -> None:  # noqa: ANN001
    open_model(qtbot, window, VAD)
    dock.dims.setText("seq_len=4")
    dock.run_comparison()
    dock.cancel()
    _wait(qtbot, dock)
    assert dock.run_button.isEnabled() and not dock.cancel_button.isEnabled()


def test_side_b_backend_follows_side_b_model(qtbot, window, dock, tmp_path) -> None:  # noqa: ANN001
    """Issue 29: B switched from "the same model" to another file kept running on the
    reference evaluator (an int8 B then failed for want of a reference DynamicQuantizeLSTM)."""
    other = tmp_path / "other.onnx"
    other.write_bytes(VAD.read_bytes())
    open_model(qtbot, window, VAD)
    window.registry.action("view.panel.numeric_compare").trigger()  # opened from View ▸ Panels
    assert dock.isVisible() and dock.label_a.text() == "fw_silero_vad_v6.onnx", dock.label_a.text()
    assert dock.model_b.currentData() == "same" and dock.backend_b.currentData() == "reference"
    dock._b_file = str(other)
    dock.refresh_sides()
    dock.model_b.setCurrentIndex(dock.model_b.findData(str(other)))
    assert dock.backend_b.currentData() == dock.backend_a.currentData() == "ort", (
        f"B on another model must run where A runs, got {dock.backend_b.currentData()!r}")
    a, b = dock.specs()
    assert b.backend == a.backend and b.model == str(other)
    # the user's own pick for that B stays while B stays, also across a refresh of the list
    dock.backend_b.setCurrentIndex(dock.backend_b.findData("reference"))
    dock.refresh_sides()
    assert dock.backend_b.currentData() == "reference"
    # back to the same model: the reference evaluator (two runtimes, one model) ...
    dock.model_b.setCurrentIndex(dock.model_b.findData("same"))
    assert dock.backend_b.currentData() == "reference"
    # ... and to the other model again: where A runs, whatever was picked before
    dock.model_b.setCurrentIndex(dock.model_b.findData(str(other)))
    assert dock.backend_b.currentData() == "ort"


@pytest.mark.timeout(180)
def test_a_divergence_inside_an_if_body_is_revealed_in_the_body(qtbot, window, dock, tmp_path) -> None:  # noqa: ANN001
    """Issue 31: the first divergence can be a node inside an If body (compare inlines the
    branch the run took); the canvas selects that node in its body and the heat map marks it."""
    from tests.editor.test_bodies import VAD16, _plant_in_body

    bad, outer = _plant_in_body(tmp_path)
    tab = open_model(qtbot, window, VAD16)
    window.registry.action("tools.compare_runs").trigger()
    dock._b_file = str(bad)
    dock.refresh_sides()
    dock.model_b.setCurrentIndex(dock.model_b.findData(str(bad)))
    dock.dims.setText("sequence=512")  # the size the VAD takes (found by a refit otherwise)
    dock.run_comparison()
    _wait(qtbot, dock)
    c = dock.comparison
    assert c is not None and c.first_divergence is not None and outer in c.first_divergence.scope, dock.status.text()
    qtbot.waitUntil(lambda: tab.selection.current is not None and tab.selection.current.node is not None)
    current = tab.selection.current
    assert current.scope != tab.doc.index.main and tab.doc.node(current.node).name == c.first_divergence.node, \
        f"selected {tab.doc.node(current.node).name!r} in scope {current.scope}, expected {c.first_divergence.node!r} in a body"
    assert dock.heatmap is not None
    # the body opens on the canvas to show the node; its box then gets the "first" cell
    qtbot.waitUntil(lambda: f"n:{current.node}" in dock.heatmap.cells_by_key(), timeout=LOAD_TIMEOUT_MS)
    assert dock.heatmap.cells_by_key()[f"n:{current.node}"][2] is True

"""Surgery ▸ Quantize… and the Quantization dock: one undo step, the sensitivity table and
heat map naming the node a planted outlier hurts, re-quantize in one step (no new
calibration), refusals, Cancel.

On tests/quantize_support.tiny_net (10 nodes) with a few random calibration sets.
"""

from __future__ import annotations

import onnx
import pytest
from PySide6.QtCore import Qt

from tests.quantize_support import tiny_net
from tests.widgets.test_edit_support import edit_copy


@pytest.fixture
def spiked(tmp_path):
    path = tmp_path / "spiked.onnx"
    onnx.save(tiny_net(spike=500.0), path)
    return path


def _fill(dialog, *, count: int = 3, held: int = 2) -> None:
    dialog.source.setCurrentIndex(dialog.source.findData("random"))
    dialog.count.setValue(count)
    dialog.held_back.setValue(held)


def _ops(doc) -> set[str]:
    return {n.op_type for n in doc.model.graph.node}


@pytest.mark.timeout(180)
def test_quantize_is_one_undo_step_and_the_dock_ranks_the_planted_node_first(qtbot, window, tmp_path, spiked):
    editing, tab, doc, original = edit_copy(qtbot, window, spiked, tmp_path)
    dock = window.quantize_dock
    depth = doc.stack.index
    seen = {}

    def accept(dialog):
        _fill(dialog)
        seen["random"] = dialog.status.text()
        dialog.exclude_nodes.setText("nope")
        seen["unknown ok"] = dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
        seen["unknown"] = dialog.status.text()
        dialog.exclude_nodes.setText("")
        dialog.source.setCurrentIndex(dialog.source.findData("folder"))
        dialog.path.setText(str(tmp_path / "no-such-folder"))
        seen["folder ok"] = dialog.buttons.button(dialog.buttons.StandardButton.Ok).isEnabled()
        _fill(dialog)
        return True

    editing.run_dialog = accept
    window.registry.action("surgery.quantize").trigger()
    assert "smoke test" in seen["random"], seen
    assert not seen["unknown ok"] and "nope" in seen["unknown"] and not seen["folder ok"], seen
    qtbot.waitUntil(lambda: doc.stack.index == depth + 1 and dock.outcome is not None, timeout=120_000)
    assert {"QuantizeLinear", "DequantizeLinear"} <= _ops(doc), _ops(doc)
    assert doc.stack.undo_label.startswith("Quantize: static int8"), doc.stack.undo_label
    assert dock.isVisible() and "checker passes" in dock.summary.text() and "RANDOM" in dock.summary.text(), \
        dock.summary.text()
    top = dock.proxy.index(0, 1)
    assert dock.proxy.data(top) == "fc2", [dock.proxy.data(dock.proxy.index(r, 1)) for r in range(dock.proxy.rowCount())]
    assert dock.heatmap is not None and dock.heatmap.visible
    qtbot.waitUntil(lambda: dock.heatmap.cell_count() >= 1, timeout=30_000)  # once the canvas laid out the new model
    # the tab's one overlay, with its own legend (it said "Compare: error against side B")
    layer = tab.overlay_layer
    assert layer.active is dock.heatmap and layer.legend.title.text() == "Quantize: error each node adds", \
        layer.legend.title.text()
    # sorting by MACs puts a Conv first (the column is numeric)
    dock.table.sortByColumn(7, Qt.SortOrder.DescendingOrder)
    assert dock.proxy.data(dock.proxy.index(0, 2)) == "Conv", dock.proxy.data(dock.proxy.index(0, 2))
    # a row chosen in the table selects its node on the canvas
    dock.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
    dock.table.setCurrentIndex(dock.proxy.index(0, 1))
    assert [doc.node(t.node).name for t in tab.selection.targets if t.kind == "node"] == ["fc2"]
    doc.undo()
    assert doc.serialize() == original, "undo restores the float model exactly"


@pytest.mark.timeout(240)
def test_requantize_keeps_ticked_nodes_in_float_without_calibrating_again(qtbot, window, tmp_path, spiked):
    editing, tab, doc, _ = edit_copy(qtbot, window, spiked, tmp_path)
    dock = window.quantize_dock
    editing.run_dialog = lambda dialog: (_fill(dialog), True)[1]
    window.registry.action("surgery.quantize").trigger()
    qtbot.waitUntil(lambda: dock.outcome is not None, timeout=120_000)
    first = dock.outcome
    quantized = doc.serialize()
    row = next(r for r in range(dock.model.rowCount()) if dock.model.row(r).node == "fc2")
    assert dock.model.setData(dock.model.index(row, 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    dock.keep_ops.setText("GlobalAveragePool")
    assert dock.requantize_button.text() == "Re-quantize (1 kept)", dock.requantize_button.text()
    depth = doc.stack.index
    dock.requantize()
    qtbot.waitUntil(lambda: dock.outcome is not first, timeout=120_000)
    assert doc.stack.index == depth + 1 and "Re-quantize" in doc.stack.undo_label, doc.stack.labels()
    fc2 = next(n for n in doc.model.graph.node if n.name == "fc2")
    assert list(fc2.input) == ["s", "F2"], f"fc2 in float reads float values: {list(fc2.input)}"
    assert set(dock.outcome.quantized.excluded) == {"fc2", "gap"}, dock.outcome.quantized.excluded
    assert "calibrate+quantize" not in dock.outcome.quantized.seconds, dock.outcome.quantized.seconds
    assert dock.outcome.proof.worst("range") < first.proof.worst("range") / 3, \
        (dock.outcome.proof.lines(), first.proof.lines())
    doc.undo()
    assert doc.serialize() == quantized
    # after an edit of their own, a re-quantize would drop it: refused, nothing changes
    from widgets.editing.common import last_refusal

    from editor.commands import SetMetadataProp

    doc.redo()
    doc.execute(SetMetadataProp("note", "mine"))
    depth = doc.stack.index
    dock.requantize()
    assert "changed since it was quantized" in last_refusal[0] and doc.stack.index == depth, last_refusal


@pytest.mark.timeout(240)
def test_requantize_after_auto_keeps_what_auto_chose(qtbot, window, tmp_path, spiked):
    editing, tab, doc, _ = edit_copy(qtbot, window, spiked, tmp_path)
    dock = window.quantize_dock

    def accept(dialog):
        _fill(dialog)
        dialog.auto.setChecked(True)
        dialog.tolerance.setValue(0.02)
        dialog.auto_metric.setCurrentIndex(dialog.auto_metric.findData("range"))
        return True

    editing.run_dialog = accept
    window.registry.action("surgery.quantize").trigger()
    qtbot.waitUntil(lambda: dock.outcome is not None, timeout=120_000)
    first = dock.outcome
    assert first.auto is not None and first.auto.reached and "fc2" in first.auto.widened, first.lines()
    assert "at 16 bits" in dock.summary.text(), dock.summary.text()
    dock.requantize()
    qtbot.waitUntil(lambda: dock.outcome is not first, timeout=120_000)
    again = dock.outcome.quantized.options
    # the 16-bit tensors --auto chose stay, and what it kept in float comes back as ticks
    assert again.wide_tensors == first.quantized.options.wide_tensors, (again.wide_tensors,
                                                                         first.quantized.options.wide_tensors)
    assert set(dock.outcome.quantized.excluded) == set(first.quantized.excluded), dock.outcome.quantized.excluded
    assert dock.outcome.proof.worst("range") <= 0.02, dock.outcome.proof.lines()


@pytest.mark.timeout(120)
def test_cancel_leaves_the_model_alone(qtbot, window, tmp_path, spiked):
    editing, tab, doc, original = edit_copy(qtbot, window, spiked, tmp_path)
    dock = window.quantize_dock
    editing.run_dialog = lambda dialog: (_fill(dialog, count=6), True)[1]
    window.registry.action("surgery.quantize").trigger()
    dock._job.progress.cancel()
    qtbot.waitUntil(lambda: not dock.pending.is_alive() and not dock._job.timer.isActive(), timeout=60_000)
    assert doc.serialize() == original and dock.outcome is None
    assert dock.requantize_button.isEnabled() is False


@pytest.mark.timeout(180)
def test_the_run_docks_saved_inputs_calibrate_and_the_dialog_reads_every_mode(qtbot, window, tmp_path, spiked):
    import numpy as np

    from editor.runtime.inputs import save_inputs

    editing, tab, doc, _ = edit_copy(qtbot, window, spiked, tmp_path)
    x = np.random.default_rng(3).random((1, 3, 16, 16), dtype=np.float32)
    save_inputs(tmp_path / "inputs.npz", {"x": x})
    assert window.run_dock.controller_for(tab).input_panel.use_saved(tmp_path / "inputs.npz") == ["x"]
    dock = window.quantize_dock
    seen = {}

    def accept(dialog):
        dialog.mode.setCurrentIndex(dialog.mode.findData("int4"))
        dialog.block.setCurrentIndex(dialog.block.findData(64))
        dialog.symmetric.setChecked(True)
        int4 = dialog.options()
        seen["int4"] = (int4.mode, int4.block_size, int4.symmetric)
        seen["int4 rows"] = (dialog._form.isRowVisible(dialog.block), dialog._form.isRowVisible(dialog.method))
        dialog.mode.setCurrentIndex(dialog.mode.findData("dynamic"))
        seen["dynamic"] = dialog.options().describe()
        dialog.mode.setCurrentIndex(dialog.mode.findData("static"))
        dialog.format.setCurrentIndex(dialog.format.findData("qoperator"))
        dialog.method.setCurrentText("percentile")
        dialog.per_channel.setChecked(False)
        dialog.activation.setCurrentText("int8")
        seen["static"] = dialog.options().describe()
        dialog.format.setCurrentIndex(dialog.format.findData("qdq"))
        dialog.method.setCurrentText("minmax")
        dialog.source.setCurrentIndex(dialog.source.findData("run"))
        return True

    editing.run_dialog = accept
    window.registry.action("surgery.quantize").trigger()
    assert seen["int4"] == ("int4", 64, True) and seen["int4 rows"] == (True, False), seen
    assert seen["dynamic"].startswith("dynamic int8"), seen
    assert seen["static"] == "static int8 (QOperator, int8 activations, per-tensor, percentile 99.999)", seen
    qtbot.waitUntil(lambda: dock.outcome is not None, timeout=120_000)
    data = dock.outcome.calibration
    assert data.source == "the Run dock's inputs" and len(data.sets) == 1 and not data.random, data.lines()
    np.testing.assert_array_equal(data.sets[0]["x"], x, err_msg="calibrated on the inputs the Run dock holds")
    assert "checker passes" in dock.summary.text() and "RANDOM" not in dock.summary.text(), dock.summary.text()

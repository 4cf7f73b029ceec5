"""Weights (grid edit, replace from .npy, cast, Constant <-> initializer, rename, delete
unused), model properties, opset conversion and clean-up passes with their previews,
driven through the dialogs; saved models checked; undo gives the original bytes back."""

from __future__ import annotations

import numpy as np
import pytest
import onnx
from PySide6.QtCore import Qt

from tests.widgets.test_edit_support import (
    IRIS,
    PPOCR,
    SQUEEZENET,
    check_saved,
    edit_copy,
    first_node,
    install,
    open_copy,
    ppocr_feed,
    squeezenet_feed,
)


def _init(doc, name):
    found = doc.initializer(doc.index.main, name)
    return onnx.numpy_helper.to_array(found[1]) if found is not None else None


def test_weight_grid_edit_commits_one_command(qtbot, window, tmp_path):
    from widgets.editing.weights import find_weight

    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    w = find_weight(doc, doc.index.main, "conv1_b_0")
    depth = doc.stack.index

    def edit(dialog):
        model = dialog.model
        assert model.rowCount() == 1 and model.columnCount() == 64
        # edit two cells through the view's delegate path (setData with EditRole)
        assert model.setData(model.index(0, 3), "2.5", Qt.ItemDataRole.EditRole)
        assert model.setData(model.index(0, 4), "-1", Qt.ItemDataRole.EditRole)
        assert not model.setData(model.index(0, 5), "abc", Qt.ItemDataRole.EditRole)  # refused cell
        assert doc.stack.index == depth  # nothing reaches the document before OK
        return dialog.apply()

    editing.run_dialog = edit
    editing.edit_weight_grid(w)
    assert doc.stack.index == depth + 1
    values = _init(doc, "conv1_b_0")
    assert values[3] == 2.5 and values[4] == -1
    check_saved(doc, tmp_path / "grid.onnx", squeezenet_feed())
    doc.undo()
    assert doc.serialize() == original


def test_replace_cast_convert_rename_delete_unused(qtbot, window, tmp_path):
    from widgets.editing.weights import find_weight

    editing = install(window, tmp_path)
    tab = open_copy(qtbot, window, SQUEEZENET, tmp_path)
    doc = tab.doc
    sid = doc.index.main
    original = doc.serialize()
    npy = tmp_path / "bias.npy"
    np.save(npy, np.arange(64, dtype=np.float32))
    assert editing.replace_weight(find_weight(doc, sid, "conv1_b_0"), str(npy))
    assert _init(doc, "conv1_b_0")[10] == 10
    check_saved(doc, tmp_path / "replaced.onnx", squeezenet_feed())
    # a wrong-shaped .npy is fine for the command but validation/ORT would complain; a bad
    # file is refused with its reason
    (tmp_path / "bad.npy").write_bytes(b"not numpy")
    snapshot = doc.serialize()
    assert not editing.replace_weight(find_weight(doc, sid, "conv1_b_0"), str(tmp_path / "bad.npy"))
    assert doc.serialize() == snapshot
    # cast to float16 and back (two steps)
    assert editing.cast_weight(find_weight(doc, sid, "conv1_b_0"), onnx.TensorProto.FLOAT16)
    assert doc.initializer(sid, "conv1_b_0")[1].data_type == onnx.TensorProto.FLOAT16
    doc.undo()
    # initializer -> Constant -> initializer
    assert editing.convert_weight(find_weight(doc, sid, "conv1_b_0"))
    assert doc.initializer(sid, "conv1_b_0") is None
    producer = doc.producer(sid, "conv1_b_0")
    assert producer is not None and doc.node(producer).op_type == "Constant"
    check_saved(doc, tmp_path / "as_constant.onnx", squeezenet_feed())
    assert editing.convert_weight(find_weight(doc, sid, "conv1_b_0", producer))
    assert doc.initializer(sid, "conv1_b_0") is not None
    # rename follows every use
    assert editing.rename_weight(find_weight(doc, sid, "conv1_b_0"), "stem_bias")
    conv = first_node(doc, "Conv")
    assert doc.node(conv).input[2] == "stem_bias"
    # delete unused: add one through the console, then the Graph menu action removes it
    editing.console.set_document(doc)
    assert editing.console.run_source(
        "doc.execute(commands.AddInitializer(doc.main, 'junk', np.zeros(3, np.float32)))")
    window.registry.action("graph.delete_unused").trigger()
    assert doc.initializer(sid, "junk") is None
    assert doc.stack.undo_label.startswith("Delete 1 unused initializer")
    doc.undo_all()
    assert doc.serialize() == original


def test_metadata_dialog_one_step(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, IRIS, tmp_path)

    def edit(dialog):
        dialog.fields["producer_name"].setText("ONNX Studio test")
        dialog.model_version.setValue(7)
        dialog.doc_string.setPlainText("edited")
        r = dialog.props.rowCount()
        dialog.props.insertRow(r)
        from PySide6.QtWidgets import QTableWidgetItem

        dialog.props.setItem(r, 0, QTableWidgetItem("license"))
        dialog.props.setItem(r, 1, QTableWidgetItem("MIT"))
        return dialog.apply()

    editing.run_dialog = edit
    window.registry.action("model.metadata").trigger()
    m = doc.model
    assert m.producer_name == "ONNX Studio test" and m.model_version == 7 and m.doc_string == "edited"
    assert {p.key: p.value for p in m.metadata_props}["license"] == "MIT"
    assert doc.stack.undo_label == "Edit model properties"
    check_saved(doc, tmp_path / "meta.onnx", {"float_input": np.ones((3, 2), np.float32)})
    # an IR version newer than onnx knows cannot be typed (the spin box stops at IR_VERSION);
    # removing an opset import still used is refused with the reason
    def drop_ml(dialog):
        for r in range(dialog.opsets.rowCount()):
            if dialog.opsets.item(r, 0).text() == "ai.onnx.ml":
                dialog.opsets.item(r, 1).setText("")
        ok = dialog.apply()
        assert "still use" in dialog.error_label.text()
        return ok

    snapshot = doc.serialize()
    editing.run_dialog = drop_ml
    window.registry.action("model.metadata").trigger()
    assert doc.serialize() == snapshot
    doc.undo_all()
    assert doc.serialize() == original


def test_cleanup_preview_apply_fixed_point(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    before = check_saved(doc, tmp_path / "before.onnx", ppocr_feed())
    seen = {}

    def preview(dialog):
        seen["changes"] = [dialog.changes.item(i).text() for i in range(dialog.changes.count())]
        assert dialog.apply_button.isEnabled()
        dialog.fixed_point.setChecked(True)
        seen["rounds"] = dialog.apply()
        seen["after"] = [dialog.changes.item(i).text() for i in range(dialog.changes.count())]
        return True

    editing.run_dialog = preview
    window.registry.action("model.cleanup.remove-identity").trigger()
    assert seen["changes"] and seen["changes"][0] != "(nothing to change)"
    assert seen["rounds"] >= 1 and seen["after"] == ["(nothing to change)"]
    assert not any(n.op_type == "Identity" for n in doc.model.graph.node)
    after = check_saved(doc, tmp_path / "no_identity.onnx", ppocr_feed())
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-6)
    while doc.stack.can_undo:
        doc.undo()
    assert doc.serialize() == original


def test_opset_conversion_one_step(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, SQUEEZENET, tmp_path)
    seen = {}

    def convert(dialog):
        dialog.target.setValue(13)
        dialog.refresh()
        seen["changes"] = [dialog.changes.item(i).text() for i in range(dialog.changes.count())]
        seen["warnings"] = [dialog.warnings.item(i).text() for i in range(dialog.warnings.count())]
        return dialog.apply()

    editing.run_dialog = convert
    window.registry.action("model.opset").trigger()
    assert "default opset 9 -> 13" in seen["changes"]
    assert doc.opset("") == 13 and doc.stack.undo_label == "Convert to opset 13"
    check_saved(doc, tmp_path / "op13.onnx", squeezenet_feed())
    doc.undo()
    assert doc.serialize() == original
    # a conversion the converter refuses shows the reason and changes nothing
    def too_old(dialog):
        dialog.target.setValue(1)
        dialog.refresh()
        seen["old"] = [dialog.warnings.item(i).text() for i in range(dialog.warnings.count())]
        return dialog.apply()

    editing.run_dialog = too_old
    window.registry.action("model.opset").trigger()
    assert seen["old"] and doc.serialize() == original


def test_new_model_tab(qtbot, window, tmp_path):
    editing = install(window, tmp_path)
    n = window.tabs.count()
    tab = editing.new_model()
    qtbot.waitUntil(lambda: tab.is_ready, timeout=10_000)
    assert window.tabs.count() == n + 1 and tab.doc.path is None
    # build a tiny graph through the dialogs and the palette, then save it
    def add_input(dialog):
        dialog.name_edit.setText("x")
        dialog.shape_edit.setText("2, 3")
        return dialog.apply()

    editing.run_dialog = add_input
    window.registry.action("graph.add_input").trigger()
    editing.run_dialog = lambda d: True
    nid = editing.add_node(choice=("", "Relu", None))
    from editor.commands import SetNodeInput

    tab.doc.execute(SetNodeInput(nid, 0, "x"))
    assert editing.make_output((tab.doc.index.main, tab.doc.node(nid).output[0]))
    # a new model targets the newest IR/opset onnx knows; step it down for onnxruntime
    def older(dialog):
        dialog.ir_version.setValue(10)
        for r in range(dialog.opsets.rowCount()):
            if dialog.opsets.item(r, 0).text() == "ai.onnx":
                dialog.opsets.item(r, 1).setText("21")
        return dialog.apply()

    editing.run_dialog = older
    window.registry.action("model.metadata").trigger()
    assert tab.doc.model.ir_version == 10 and tab.doc.opset("") == 21
    outs = check_saved(tab.doc, tmp_path / "new.onnx", {"x": -np.ones((2, 3), np.float32)})
    assert (outs[0] == 0).all()


@pytest.mark.timeout(120)
def test_optimize_preview_checks_outputs_and_applies_one_step(qtbot, window, tmp_path):
    editing, tab, doc, original = edit_copy(qtbot, window, PPOCR, tmp_path)
    nodes_before = len(doc.model.graph.node)
    seen = {}

    def preview(dialog):
        seen["changes"] = [dialog.changes.item(i).text() for i in range(dialog.changes.count())]
        assert dialog.check_button.isEnabled()
        dialog.check()
        qtbot.waitUntil(lambda: dialog._runner is None, timeout=60000)
        seen["check"] = dialog.check_label.text()
        seen["rounds"] = dialog.apply()
        return True

    editing.run_dialog = preview
    window.registry.action("model.cleanup.optimize-extended").trigger()
    assert any("Constant" in c for c in seen["changes"]), seen["changes"]
    assert seen["check"].startswith("outputs equal"), seen["check"]
    assert seen["rounds"] == 1 and len(doc.model.graph.node) < nodes_before
    doc.undo()
    assert doc.serialize() == original
